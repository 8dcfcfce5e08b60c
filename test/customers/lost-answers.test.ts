import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { appLosingAnswers } from '../helpers/lost-answers.js'

/**
 * A customer request whose write committed but whose answer the database connection lost (a
 * dropped connection, a statement past its timeout) is a 503, and its Idempotency-Key is free
 * again: the same request sent again finishes what the first attempt did, and makes nothing twice.
 */

let t: Awaited<ReturnType<typeof appLosingAnswers>>
beforeAll(async () => {
  t = await appLosingAnswers('Lost answers')
})
afterAll(() => t?.close())

describe('a customer request whose answer was lost, sent again with its Idempotency-Key', () => {
  it('create: the retry answers the customer the first attempt made, and makes no second one', async () => {
    const body = { email: 'lost.create@example.com', description: 'Lost answer' }
    const key = { 'idempotency-key': 'lost-customer' }
    t.lose.loseAnswerOf((sql) => sql.startsWith('INSERT INTO customers'))
    expectError(await t.sk.post('/v2/customers/', body, key), 503, 'service_unavailable')

    const retried = await t.sk.post('/v2/customers/', body, key)
    expect(retried.status, retried.text).toBe(201)
    expect(retried.body).toMatchObject({ email: body.email, description: body.description, sources: [] })
    const stored = await t.store.db.query('SELECT id FROM customers WHERE email = $1', [body.email])
    expect(stored.rows.map((r) => r.id)).toEqual([retried.body.id])

    // another key is another request: a second customer with the same email
    const other = await t.sk.post('/v2/customers/', body, { 'idempotency-key': 'another' })
    expect(other.status).toBe(201)
    expect(other.body.id).not.toBe(retried.body.id)
  })

  it('attach: the retry answers the customer with the source attached, not source_used', async () => {
    const c = (await t.sk.post('/v2/customers/', { email: 'lost.attach@example.com', description: 'x' })).body
    const s = (await t.sk.post('/v2/sources/', cardSource())).body
    const key = { 'idempotency-key': 'lost-attach' }
    t.lose.loseNextCommit()
    expectError(await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id }, key), 503, 'service_unavailable')

    const retried = await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id }, key)
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body.sources.map((x: { id: string; vaulted: boolean }) => [x.id, x.vaulted])).toEqual([[s.id, true]])

    // any other attach of the source is refused as before: it was used once
    const other = (await t.sk.post('/v2/customers/', { email: 'other@example.com', description: 'x' })).body
    for (const [to, k] of [
      [c.id, 'again'],
      [other.id, 'elsewhere'],
    ]) {
      const res = await t.sk.post(`/v2/customers/${to}/sources`, { source: s.id }, { 'idempotency-key': k as string })
      expectError(res, 400, 'source_used', 'source')
    }
  })
})
