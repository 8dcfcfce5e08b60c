import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import { buildApp, type Client, cardSource, client } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { losingAnswers } from '../helpers/lost-answers.js'
import { type TestStore, testStore } from '../helpers/store.js'

/**
 * A customer request whose write committed but whose answer the database connection lost (a
 * dropped connection, a statement past its timeout) is a 503, and its Idempotency-Key is free
 * again: the same request sent again finishes what the first attempt did, and makes nothing twice.
 */

let store: TestStore
let app: App
let sk: Client
let lose: ReturnType<typeof losingAnswers>

beforeAll(async () => {
  store = await testStore()
  lose = losingAnswers(store.db)
  ;({ app } = await buildApp(lose.db, new Vault(randomBytes(32))))
  sk = client(app, (await app.services.accounts.create('Lost answers')).sk_test_key)
})
afterAll(async () => {
  await app?.close()
  await store?.close()
})

describe('a customer request whose answer was lost, sent again with its Idempotency-Key', () => {
  it('create: the retry answers the customer the first attempt made, and makes no second one', async () => {
    const body = { email: 'lost.create@example.com', description: 'Lost answer' }
    const key = { 'idempotency-key': 'lost-customer' }
    lose.loseAnswerOf((sql) => sql.startsWith('INSERT INTO customers'))
    expectError(await sk.post('/v2/customers/', body, key), 503, 'service_unavailable')

    const retried = await sk.post('/v2/customers/', body, key)
    expect(retried.status, retried.text).toBe(201)
    expect(retried.body).toMatchObject({ email: body.email, description: body.description, sources: [] })
    const stored = await store.db.query('SELECT id FROM customers WHERE email = $1', [body.email])
    expect(stored.rows.map((r) => r.id)).toEqual([retried.body.id])

    // another key is another request: a second customer with the same email
    const other = await sk.post('/v2/customers/', body, { 'idempotency-key': 'another' })
    expect(other.status).toBe(201)
    expect(other.body.id).not.toBe(retried.body.id)
  })

  it('attach: the retry answers the customer with the source attached, not source_used', async () => {
    const c = (await sk.post('/v2/customers/', { email: 'lost.attach@example.com', description: 'x' })).body
    const s = (await sk.post('/v2/sources/', cardSource())).body
    const key = { 'idempotency-key': 'lost-attach' }
    lose.loseNextCommit()
    expectError(await sk.post(`/v2/customers/${c.id}/sources`, { source: s.id }, key), 503, 'service_unavailable')

    const retried = await sk.post(`/v2/customers/${c.id}/sources`, { source: s.id }, key)
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body.sources.map((x: { id: string; vaulted: boolean }) => [x.id, x.vaulted])).toEqual([[s.id, true]])

    // any other attach of the source is refused as before: it was used once
    const other = (await sk.post('/v2/customers/', { email: 'other@example.com', description: 'x' })).body
    for (const [to, k] of [
      [c.id, 'again'],
      [other.id, 'elsewhere'],
    ]) {
      const res = await sk.post(`/v2/customers/${to}/sources`, { source: s.id }, { 'idempotency-key': k as string })
      expectError(res, 400, 'source_used', 'source')
    }
  })
})
