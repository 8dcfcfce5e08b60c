import { randomBytes } from 'node:crypto'
import { Vault } from '../../src/crypto/vault.js'
import type { Db, Queryable } from '../../src/store/db.js'
import { buildApp, client } from './app.js'
import { testStore } from './store.js'

const lost = () => new Error('Connection terminated unexpectedly')

/**
 * A database whose answers can be lost after it has done the work, as when the connection drops
 * or a statement outlasts its timeout once it has committed: the request then answers 503 and its
 * Idempotency-Key is free again for the same request.
 */
export function losingAnswers(db: Db) {
  let statement: ((sql: string) => boolean) | undefined
  let transaction = false
  const wrap = (q: Queryable): Queryable => ({
    query: async <R>(sql: string, params?: unknown[]) => {
      const res = await q.query<R>(sql, params)
      if (statement?.(sql)) {
        statement = undefined
        throw lost()
      }
      return res
    },
    exec: (sql) => q.exec(sql),
  })
  const wrapped: Db = {
    ...wrap(db),
    shared: wrap(db.shared),
    transaction: async (fn) => {
      const out = await db.transaction((tx) => fn(wrap(tx)))
      if (transaction) {
        transaction = false
        throw lost()
      }
      return out
    },
    close: () => db.close(),
  }
  return {
    db: wrapped,
    /** the next statement `matches` accepts runs, and its answer is lost */
    loseAnswerOf(matches: (sql: string) => boolean) {
      statement = matches
    },
    /** the next transaction commits, and its answer is lost */
    loseNextCommit() {
      transaction = true
    },
  }
}

/** An app on a fresh database whose answers can be lost, with a client of one test account. */
export async function appLosingAnswers(accountName: string) {
  const store = await testStore()
  const lose = losingAnswers(store.db)
  const { app } = await buildApp(lose.db, new Vault(randomBytes(32)))
  const sk = client(app, (await app.services.accounts.create(accountName)).sk_test_key)
  return {
    store,
    sk,
    lose,
    close: async () => {
      await app.close()
      await store.close()
    },
  }
}
