import pg from 'pg'

export interface QueryResult<R> {
  rows: R[]
  rowCount: number
}

/** What a repository needs: run one statement. Both a pool and an open transaction are this. */
export interface QueryOptions {
  /**
   * A statement over the rows of a batch (store/batch.ts), joining them to the tables by key. It
   * runs on connections of its own, where sequential scans are off: a plan is made on a
   * connection's first execution and kept, and one made while a table was young (small enough to
   * read whole) was kept as the table grew, every batch then reading every row.
   */
  batch?: boolean
}

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<R>>
  /** several statements without parameters, for migrations */
  exec(sql: string): Promise<void>
}

export interface Db extends Queryable {
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  close(): Promise<void>
}

const INT8 = 20
const TIMESTAMPTZ = 1184

/**
 * PostgreSQL prints a timestamptz in UTC as `2026-11-21 10:15:30.1234+00`, and in JSON as
 * `2026-11-21T10:15:30.1234+00:00`; the API shows `2026-11-21T10:15:30.123400Z`, keeping the
 * microseconds a JavaScript Date would drop.
 */
export function formatTimestamp(text: string): string {
  // most times have six digits of fraction: the API's form is then a matter of slicing
  if (text.length === 32 && text[10] === 'T' && text.endsWith('+00:00')) return `${text.slice(0, 26)}Z`
  if (text.length === 29 && text[10] === ' ' && text.endsWith('+00'))
    return `${text.slice(0, 10)}T${text.slice(11, 26)}Z`
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00(?::00)?$/.exec(text)
  if (!m) return new Date(text).toISOString()
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0')}Z`
}

// Amounts are bigint columns; every amount the API accepts is a safe integer.
const parseInt8 = (v: string) => Number(v)

/** PostgreSQL's refusal to run a prepared statement whose answer's column types have changed. */
function isStalePlan(err: unknown): boolean {
  return (
    (err as { code?: string }).code === '0A000' &&
    /cached plan must not change result type/.test((err as { message?: string }).message ?? '')
  )
}

/** Connections each process keeps, besides its pool, for the statements of batches. */
export const BATCH_CONNECTIONS = 4

export interface PostgresOptions {
  url: string
  poolSize?: number
  /** a schema to work in, for tests that share one database */
  schema?: string
}

export async function openPostgres(opts: PostgresOptions): Promise<Db> {
  // Every statement is prepared once per connection and looks rows up by key or walks an index
  // by account, so one generic plan serves every value. Left to choose, PostgreSQL planned the
  // page of charges again in each execution, a custom plan looking cheaper to its estimates: 5%
  // of a page's instructions (bench/pg-instructions.sh), and a plan that could change under load.
  //
  // No JIT compilation: a batched statement's generic plan counts on a hundred rows in its batch,
  // and with a few hundred thousand charges the page of charges' estimate passed jit_above_cost.
  // PostgreSQL then compiled the plan in every execution, about 10 ms for a statement that runs
  // in well under one: list charges went from 16 000-20 000 pages a second to 2 300-2 700
  // (bench/README.md, eighteenth round).
  const settings = ['-c TimeZone=UTC', '-c plan_cache_mode=force_generic_plan', '-c jit=off']
  if (opts.schema) settings.push(`-c search_path=${opts.schema}`)
  const openPool = (max: number, extra: string[] = []) => {
    const p = new pg.Pool({
      connectionString: opts.url,
      max,
      options: [...settings, ...extra].join(' '),
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
          if (oid === INT8) return parseInt8
          if (oid === TIMESTAMPTZ) return formatTimestamp
          return pg.types.getTypeParser(oid, format)
        }) as typeof pg.types.getTypeParser,
      },
    })
    // an idle client that loses its connection must not take the process down
    p.on('error', () => {})
    return p
  }
  const pool = openPool(opts.poolSize ?? 10)
  // each kind of batch has one statement in flight at a time (store/batch.ts)
  const batchPool = openPool(BATCH_CONNECTIONS, ['-c enable_seqscan=off'])
  // Every statement is named by its text, so each connection parses and plans it once and then
  // only binds values. The texts are the store's own, so their number is bounded.
  const names = new Map<string, string>()
  let named = 0
  const nameOf = (sql: string) => {
    let name = names.get(sql)
    if (!name) {
      name = `s${named++}`
      names.set(sql, name)
    }
    return name
  }
  const run = async <R>(client: pg.Pool | pg.PoolClient, sql: string, params?: unknown[]) => {
    const res = params ? await client.query({ name: nameOf(sql), text: sql, values: params }) : await client.query(sql)
    return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 }
  }
  // A migration that changes the type of a column a prepared statement answers (011) leaves the
  // statement unusable on every connection that prepared it. It is prepared again under a new name;
  // outside a transaction the failed execution, which did nothing, is run again at once, and a
  // transaction is run again whole (`transaction`).
  const query = async <R>(client: pg.Pool | pg.PoolClient, sql: string, params?: unknown[], inTransaction = false) => {
    try {
      return await run<R>(client, sql, params)
    } catch (err) {
      if (!params || !isStalePlan(err)) throw err
      names.delete(sql)
      if (inTransaction) throw err
      return run<R>(client, sql, params)
    }
  }
  await pool.query('SELECT 1')
  const transaction = async <T>(fn: (tx: Queryable) => Promise<T>, attempt = 1): Promise<T> => {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const result = await fn({
        query: (sql, params) => query(client, sql, params, true),
        exec: async (sql) => {
          await client.query(sql)
        },
      })
      await client.query('COMMIT')
      return result
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {})
      if (attempt === 1 && isStalePlan(err)) return transaction(fn, 2)
      throw err
    } finally {
      client.release()
    }
  }
  return {
    query: (sql, params, options) => query(options?.batch ? batchPool : pool, sql, params),
    exec: async (sql) => {
      await pool.query(sql)
    },
    transaction,
    async close() {
      await Promise.all([pool.end(), batchPool.end()])
    },
  }
}
