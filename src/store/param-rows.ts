/** A column of the rows a batch sends: its name and PostgreSQL type. */
export type ParamColumn = readonly [name: string, type: string]

/**
 * The row counts a statement is made for, up to the largest batch (store/batch.ts); a batch is
 * sent as the smallest that holds it.
 */
const ROW_COUNTS = [1, 2, 4, 8, 16, 32, 64]

/**
 * The rows of a batch (store/batch.ts) sent as a `VALUES` list of parameters, one a value, each
 * cast to its column's type. Sent as one JSON document of rows (`jsonb_to_recordset`), every
 * value was lexed as JSON by PostgreSQL and picked out again: a quarter more of its instructions
 * a source, the ids and ciphertexts being most of the text (bench/README.md, twelfth round).
 *
 * A statement's text depends on its number of rows, and each connection keeps what it prepared
 * (store/db.ts names statements by their text): one statement for every batch size from 1 to 64
 * held about 50 MB in a PostgreSQL backend for the charges' statement alone. So a statement is
 * made only for the counts of ROW_COUNTS, and a batch is padded up to one with rows of nulls,
 * which the relation `rows` leaves out: the first column is never null in a row of a batch.
 */
export class ParamRows<Row extends Record<string, unknown>> {
  /** the column names, in order: `id, source_id, …` */
  readonly names: string
  private readonly json: boolean[]
  private readonly statements = new Map<string, string>()

  constructor(private readonly columns: readonly (ParamColumn & readonly [keyof Row & string, string])[]) {
    this.names = columns.map(([name]) => name).join(', ')
    this.json = columns.map(([, type]) => type === 'jsonb' || type === 'json')
  }

  /** The parameters of the rows, padded as `statement` expects; JSON columns as their text. */
  values(rows: readonly Row[]): unknown[] {
    const out: unknown[] = []
    for (const row of rows) {
      for (let c = 0; c < this.columns.length; c++) {
        const v = row[(this.columns[c] as ParamColumn)[0]] ?? null
        out.push(v !== null && this.json[c] ? JSON.stringify(v) : v)
      }
    }
    const padded = rowCount(rows.length) * this.columns.length
    while (out.length < padded) out.push(null)
    return out
  }

  /**
   * The statement for a batch of n rows, made by `make` the first time for its row count: `rows`
   * is the batch as a relation with the columns' names (`(SELECT … FROM (VALUES ($1::text, …), …)
   * …)`), `next` the number of the first parameter after its values.
   */
  statement(n: number, make: (rows: string, next: number) => string, variant = ''): string {
    const count = rowCount(n)
    const key = `${variant}:${count}`
    let sql = this.statements.get(key)
    if (sql === undefined) {
      const width = this.columns.length
      const list = Array.from(
        { length: count },
        (_, r) => `(${this.columns.map(([, type], c) => `$${r * width + c + 1}::${type}`).join(', ')})`,
      )
      const first = (this.columns[0] as ParamColumn)[0]
      sql = make(
        `(SELECT * FROM (VALUES ${list.join(',\n         ')}) AS v (${this.names}) WHERE ${first} IS NOT NULL)`,
        count * width + 1,
      )
      this.statements.set(key, sql)
    }
    return sql
  }
}

function rowCount(n: number): number {
  const count = ROW_COUNTS.find((c) => c >= n)
  if (count === undefined) throw new Error(`a batch of ${n} rows is more than a statement is made for`)
  return count
}
