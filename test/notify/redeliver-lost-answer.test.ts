import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIRECT, TEST_CARD } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { appLosingAnswers } from '../helpers/lost-answers.js'

/**
 * A redelivery whose answer the database connection lost after it was queued is a 503; sent again
 * with its Idempotency-Key, it answers the delivery as it is, and queues no second attempt.
 */

let t: Awaited<ReturnType<typeof appLosingAnswers>>
beforeAll(async () => {
  t = await appLosingAnswers('Lost redelivery')
})
afterAll(() => t?.close())

/** A failed notify call of a new charge's event. */
async function failedDelivery(): Promise<string> {
  const redirect = { ...REDIRECT, notify: 'https://receiver.example/hooks' }
  const src = (await t.sk.post('/v2/sources/', { type: 'card', card: TEST_CARD, redirect })).body
  const charge = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.id })
  expect(charge.status, charge.text).toBe(201)
  const id = (await t.sk.get(`/v2/deliveries/?charge=${charge.body.id}`)).body.data[0].id
  await failAgain(id)
  return id
}
const failAgain = (id: string) =>
  t.store.db.query(`UPDATE deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = $1`, [id])

/** A redelivery sent with `key` whose answer is lost once it is queued. */
async function lostRedelivery(id: string, key: string) {
  t.lose.loseAnswerOf((sql) => sql.includes('UPDATE deliveries') && sql.includes('redeliver_key'))
  const res = await t.sk.post(`/v2/deliveries/${id}/redeliver`, undefined, { 'idempotency-key': key })
  expectError(res, 503, 'service_unavailable')
}

describe('a redelivery whose answer was lost, sent again with its Idempotency-Key', () => {
  it('is answered the delivery queued, not 400 delivery_not_failed', async () => {
    const id = await failedDelivery()
    await lostRedelivery(id, 'lost-redeliver')
    const retried = await t.sk.post(`/v2/deliveries/${id}/redeliver`, undefined, {
      'idempotency-key': 'lost-redeliver',
    })
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body).toMatchObject({ id, status: 'pending' })
  })

  it('queues no second attempt once the one it queued has failed too; another key does', async () => {
    const id = await failedDelivery()
    await lostRedelivery(id, 'lost-again')
    await failAgain(id)
    const retried = await t.sk.post(`/v2/deliveries/${id}/redeliver`, undefined, { 'idempotency-key': 'lost-again' })
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body).toMatchObject({ id, status: 'failed' })
    const another = await t.sk.post(`/v2/deliveries/${id}/redeliver`, undefined, { 'idempotency-key': 'another' })
    expect(another.body).toMatchObject({ id, status: 'pending' })
  })
})
