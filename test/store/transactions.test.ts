import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type TestStore, testStore } from '../helpers/store.js'

/** A transaction whose connection is lost fails, and the process and the pool go on. */
let store: TestStore
beforeAll(async () => {
  store = await testStore()
})
afterAll(() => store?.close())

describe('a transaction whose connection is lost', () => {
  it('fails with the loss, takes nothing down, and the pool serves the next one', async () => {
    for (let i = 0; i < 3; i++) {
      const failed = await store.db
        .transaction(async (tx) => {
          const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid
          // the server ends this connection, as it does when it stops or crashes
          await store.db.query('SELECT pg_terminate_backend($1)', [pid])
          await new Promise((resolve) => setTimeout(resolve, 50))
          await tx.query('SELECT 1')
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        )
      expect(failed).toBeInstanceOf(Error)
      expect((await store.db.transaction((tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).rows).toEqual([
        { one: 1 },
      ])
    }
  })
})
