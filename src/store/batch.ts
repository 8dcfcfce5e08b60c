import { type Db, isStatementRefused, type Queryable } from './db.js'

export interface SharedOptions<I> {
  /** the most calls one statement serves */
  maxSize?: number
  /**
   * The row a call writes. Calls with one key never share a statement: one statement writing one
   * row for two of them would apply one and answer both; the later waits for the next statement,
   * in the order the calls came. A statement's calls go in the order of their keys, so that two
   * processes' statements over the same rows lock them in one order and wait for each other
   * rather than deadlock: a statement's plan reads its arrays in order (a nested loop over
   * `unnest`, the shared pool's generic plans) unless it orders its locks itself, as a new
   * charge's does.
   */
  key?: (item: I) => string
}

interface Waiting<I, O> {
  item: I
  resolve: (o: O) => void
  reject: (e: unknown) => void
}

/**
 * A repository function whose concurrent calls on one pool share one statement over many rows.
 * `run` is the statement: it takes the calls' items and answers one result per item, in order;
 * a lone call is a statement over one row, so there is one statement whatever the load.
 *
 * On a pool, the statement runs on the pool's connections for shared statements (store/db.ts); a
 * call made while no statement of this function is under way runs at once, alone;
 * calls made while one is wait, and go together as the next as soon as it returns. Under no load
 * nothing waits; under load a round trip, a plan's execution and a commit serve many requests
 * instead of one. In a transaction (a Queryable that is not a pool) the call runs alone on it.
 * When PostgreSQL refuses a statement of several calls, each is run again alone: the statement
 * wrote nothing, and one bad call must not fail the others. Any other failure (the connection
 * lost, an answer that could not be read) fails every call of the statement, which may have
 * committed: running a call again could find its own writes and answer wrongly.
 */
export function sharedStatement<I, O>(
  run: (db: Queryable, items: I[]) => Promise<O[]>,
  opts: SharedOptions<I> = {},
): (db: Queryable, item: I) => Promise<O> {
  const queues = new WeakMap<Queryable, (item: I) => Promise<O>>()
  const alone = (db: Queryable, item: I) => run(db, [item]).then((out) => out[0] as O)
  return (db, item) => {
    if (!('transaction' in db)) return alone(db, item)
    let queue = queues.get(db)
    if (!queue) {
      queue = queueOn((db as Db).shared, run, opts)
      queues.set(db, queue)
    }
    return queue(item)
  }
}

function queueOn<I, O>(
  db: Queryable,
  run: (db: Queryable, items: I[]) => Promise<O[]>,
  opts: SharedOptions<I>,
): (item: I) => Promise<O> {
  const maxSize = opts.maxSize ?? 64
  const key = opts.key
  const waiting: Waiting<I, O>[] = []
  let running = false

  const settle = (calls: Waiting<I, O>[]): Promise<unknown> =>
    run(
      db,
      calls.map((c) => c.item),
    ).then(
      (out) => {
        for (let i = 0; i < calls.length; i++) calls[i]?.resolve(out[i] as O)
      },
      (err: unknown) => {
        if (calls.length > 1 && isStatementRefused(err)) return Promise.all(calls.map((c) => settle([c])))
        for (const c of calls) c.reject(err)
      },
    )

  /** The next statement's calls: the oldest of each key, in the order of their keys. */
  function take(): Waiting<I, O>[] {
    if (!key) return waiting.splice(0, maxSize)
    const keys = new Set<string>()
    const calls: Waiting<I, O>[] = []
    for (let i = 0; i < waiting.length && calls.length < maxSize; ) {
      const k = key((waiting[i] as Waiting<I, O>).item)
      if (keys.has(k)) {
        i++
        continue
      }
      keys.add(k)
      calls.push(...waiting.splice(i, 1))
    }
    return calls.sort((a, b) => (key(a.item) < key(b.item) ? -1 : 1))
  }

  function next() {
    if (running || waiting.length === 0) return
    running = true
    void settle(take()).finally(() => {
      running = false
      next()
    })
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject })
      next()
    })
}
