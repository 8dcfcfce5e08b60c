import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import { buildApp, type Client, client } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { losingAnswers } from '../helpers/lost-answers.js'
import { type TestStore, testStore } from '../helpers/store.js'

/**
 * An advance of the test clock whose answer the database connection lost after it moved the clock
 * is a 503; sent again with its Idempotency-Key, it answers the clock as moved, and moves it no
 * further. Another advance moves it as usual.
 */

let store: TestStore
let app: App
let sk: Client
let lose: ReturnType<typeof losingAnswers>

beforeAll(async () => {
  store = await testStore()
  lose = losingAnswers(store.db)
  ;({ app } = await buildApp(lose.db, new Vault(randomBytes(32))))
  sk = client(app, (await app.services.accounts.create('Lost clock answers')).sk_test_key)
})
afterAll(async () => {
  await app?.close()
  await store?.close()
})

describe('an advance whose answer was lost, sent again with its Idempotency-Key', () => {
  it('moves the clock once', async () => {
    const key = { 'idempotency-key': 'advance-an-hour' }
    lose.loseAnswerOf((sql) => sql.includes('UPDATE accounts SET test_clock_offset_seconds'))
    expectError(await sk.post('/v2/test/clock/advance', { seconds: 3600 }, key), 503, 'service_unavailable')

    const retried = await sk.post('/v2/test/clock/advance', { seconds: 3600 }, key)
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body.offset_seconds).toBe(3600)
    expect((await sk.get('/v2/test/clock')).body.offset_seconds).toBe(3600)

    // the answer is kept now, and another key is another advance
    expect((await sk.post('/v2/test/clock/advance', { seconds: 3600 }, key)).body.offset_seconds).toBe(3600)
    const next = await sk.post('/v2/test/clock/advance', { seconds: 60 }, { 'idempotency-key': 'a-minute' })
    expect(next.body.offset_seconds).toBe(3660)
    expect((await sk.post('/v2/test/clock/advance', { seconds: 60 })).body.offset_seconds).toBe(3720)
  })
})
