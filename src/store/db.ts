import pg from 'pg'

export interface QueryResult<R> {
  rows: R[]
  rowCount: number
}

/** What a repository needs: run one statement. Both a pool and an open transaction are this. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>>
  /** several statements without parameters, for migrations */
  exec(sql: string): Promise<void>
}

export interface Db extends Queryable {
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /**
   * Connections of their own for the statements concurrent requests share (store/batch.ts), which
   * join the rows of many requests to the tables by key. Sequential scans are off there: a plan is
   * made on a connection's first execution and kept, and one made while a table was young (small
   * enough to read whole, rather than look rows up by key) would be kept as the table grew, every
   * statement then reading every row.
   */
  shared: Queryable
  close(): Promise<void>
}

const INT8 = 20
const TIMESTAMPTZ = 1184

/**
 * PostgreSQL prints a timestamptz in UTC as `2026-11-21 10:15:30.1234+00`, and in JSON as
 * `2026-11-21T10:15:30.1234+00:00`; the API shows `2026-11-21T10:15:30.123400Z`, keeping the
 * microseconds a JavaScript Date would drop. Rows are parsed after their statement has committed,
 * so this never throws: a time it cannot read (none the service writes) is shown as PostgreSQL
 * printed it.
 */
export function formatTimestamp(text: string): string {
  // most times have six digits of fraction: the API's form is then a matter of slicing
  if (text.length === 32 && text[10] === 'T' && text.endsWith('+00:00')) return `${text.slice(0, 26)}Z`
  if (text.length === 29 && text[10] === ' ' && text.endsWith('+00'))
    return `${text.slice(0, 10)}T${text.slice(11, 26)}Z`
  const m = /^(\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00(?::00)?$/.exec(text)
  if (!m) return text
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0')}Z`
}

// SQLSTATEs of a transaction ended for meeting another: a deadlock, or a serialization failure
const CONFLICTED = new Set(['40P01', '40001'])

/**
 * PostgreSQL ended the transaction because it met another one (a deadlock, a serialization
 * failure). That transaction wrote nothing, but a request of several (a charge records its intent,
 * then its outcome) may have been partly done: the same request sent again with its
 * Idempotency-Key finishes it.
 */
export function isTransactionConflict(err: unknown): boolean {
  return err instanceof pg.DatabaseError && CONFLICTED.has(err.code ?? '')
}

/**
 * A write refused because the account it names is no longer stored (its foreign key): another
 * process removed the account while this one still trusted a key of it from its cache.
 */
export function isAccountGone(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code === '23503' && /_account_id_fkey$/.test(err.constraint ?? '')
}

/**
 * PostgreSQL refused the statement itself (a constraint, a lock it would deadlock on, a bad
 * value): the statement wrote nothing. Not so for an error of the connection, which may have been
 * lost after the statement committed, or one raised in this process while reading the answer.
 */
export function isStatementRefused(err: unknown): boolean {
  return err instanceof pg.DatabaseError && !isDatabaseUnavailable(err)
}

const DATABASE_SILENT = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout)/

// SQLSTATEs of a server that is shutting down, crashed or still starting (57P01, 57P02, 57P03)
const SERVER_GOING_OR_COMING = new Set(['57P01', '57P02', '57P03'])
// the socket errors of a connection that could not be made or was lost
const CONNECTION_FAILED = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'])

/**
 * The database cannot serve for now, though nothing is wrong with the statement: it is out of
 * resources (SQLSTATE class 53: a full disk, out of memory, too many connections), shutting down
 * or starting, or the connection to it could not be made or was lost (class 08, a socket error).
 * The same request may succeed later.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const { code, syscall } = err as { code?: unknown; syscall?: unknown }
  if (typeof code === 'string') {
    if (err instanceof pg.DatabaseError) {
      if (code.startsWith('53') || code.startsWith('08') || SERVER_GOING_OR_COMING.has(code)) return true
      // a database an operator closed to connections for now (ALTER DATABASE … ALLOW_CONNECTIONS)
      return code === '55000' && /not currently accepting connections/.test(err.message)
    }
    if (typeof syscall === 'string' && CONNECTION_FAILED.has(code)) return true
  }
  // pg's own words for a connection that ended under a query, or that did not open or answer in time
  return DATABASE_SILENT.test(err.message)
}

// Amounts are bigint columns; every amount the API accepts is a safe integer.
const parseInt8 = (v: string) => Number(v)

/** Connections each process keeps, besides its pool, for the statements requests share. */
export const SHARED_CONNECTIONS = 4

export interface PostgresOptions {
  url: string
  poolSize?: number
  /** a schema to work in, for tests that share one database */
  schema?: string
  /** how long a connection may take to open (10 s), and a statement to answer (60 s) */
  connectTimeoutMs?: number
  queryTimeoutMs?: number
}

export async function openPostgres(opts: PostgresOptions): Promise<Db> {
  // Every statement is prepared once per connection and looks rows up by key or walks an index
  // by account, so one generic plan serves every value, and a plan cannot change under load.
  //
  // No JIT compilation: the statements are short key lookups and index walks, and compiling a
  // plan costs far more than running one; the estimates of a large table can still pass
  // jit_above_cost and have PostgreSQL compile in every execution.
  const settings = ['-c TimeZone=UTC', '-c plan_cache_mode=force_generic_plan', '-c jit=off']
  if (opts.schema) settings.push(`-c search_path=${opts.schema}`)
  const openPool = (max: number, extra: string[] = []) => {
    const p = new pg.Pool({
      connectionString: opts.url,
      max,
      // a server that stops answering (frozen, or gone without closing the connection, as a
      // network partition leaves it) fails the request as unavailable rather than holding it
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      query_timeout: opts.queryTimeoutMs ?? 60_000,
      keepAlive: true,
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
  // each kind of shared statement has one in flight at a time (store/batch.ts)
  const sharedPool = openPool(SHARED_CONNECTIONS, ['-c enable_seqscan=off'])
  // Every statement is named by its text, so each connection parses and plans it once and then
  // only binds values. The texts are the store's own, so their number is bounded. They are made
  // once, as module constants: a text built anew for each call would be hashed and compared whole,
  // on every call, in this lookup and in the driver's.
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
  const query = async <R>(client: pg.Pool | pg.PoolClient, sql: string, params?: unknown[]) => {
    const res = params ? await client.query({ name: nameOf(sql), text: sql, values: params }) : await client.query(sql)
    return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 }
  }
  await pool.query('SELECT 1')
  const transaction = async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    const client = await pool.connect()
    // A connection lost while the transaction holds it fails the statement under way; the client
    // also reports it as an event, which must not take the process down (the pool listens only
    // to idle clients). The broken client is then let go of, not put back.
    let lost: Error | undefined
    const onLost = (err: Error) => {
      lost = err
    }
    client.on('error', onLost)
    try {
      await client.query('BEGIN')
      const result = await fn({
        query: (sql, params) => query(client, sql, params),
        exec: async (sql) => {
          await client.query(sql)
        },
      })
      await client.query('COMMIT')
      return result
    } catch (err) {
      // a connection that did not answer in time may answer later, out of turn: it is let go of
      if (err instanceof Error && DATABASE_SILENT.test(err.message)) lost ??= err
      if (!lost) await client.query('ROLLBACK').catch(() => {})
      throw err
    } finally {
      // a lost client keeps its listener: it is ended, and may report more on the way
      if (!lost) client.off('error', onLost)
      client.release(lost)
    }
  }
  return {
    query: (sql, params) => query(pool, sql, params),
    exec: async (sql) => {
      await pool.query(sql)
    },
    transaction,
    shared: {
      query: (sql, params) => query(sharedPool, sql, params),
      exec: async (sql) => {
        await sharedPool.query(sql)
      },
    },
    async close() {
      await Promise.all([pool.end(), sharedPool.end()])
    },
  }
}
