import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIRECT, type Reply, TEST_CARD, type TestApp, testApp } from '../helpers/app.js'
import { grepStoreFor, leakFinder } from './card-leaks.js'

/**
 * The grep of card-data.test.ts once the test cards have been charged: captured, refunded, saved
 * and charged again with a security code, through 3-D Secure, declined. No answer, log line or
 * stored row (charges, refunds, events, notify calls, idempotency records) holds a card number or
 * a security code.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const futureYear = String(new Date().getUTCFullYear() + 2)
const NUMBERS = [
  '4242424242424242',
  '5555555555554444',
  '4000000000003220',
  '4000000000003246',
  '4000000000009987',
  '4000000000000127',
]
const leaks = leakFinder(NUMBERS, ['987', '4321'])

describe('card data after charges of the test cards', () => {
  const answers: Reply[] = []
  const keep = async (res: Promise<Reply>) => {
    const r = await res
    answers.push(r)
    return r
  }
  /** A card source that notifies, so each event's notify call is stored too, and a charge of it. */
  async function charge(number: string, cvc: string, extra: object = {}, headers: Record<string, string> = {}) {
    const src = await keep(
      t.sk.post('/v2/sources/', {
        type: 'card',
        card: { ...TEST_CARD, number, cvc, exp_year: futureYear },
        redirect: { ...REDIRECT, notify: 'http://127.0.0.1:9/never-called' },
      }),
    )
    expect(src.status, src.text).toBe(200)
    const ch = await keep(
      t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, ...extra }, headers),
    )
    expect(ch.status, ch.text).toBe(201)
    return ch.body
  }
  const approve = async (id: string) => {
    const res = await keep(t.sk.post(`/v2/test/charges/${id}/authorize`, { decision: 'approve' }))
    expect(res.status, res.text).toBe(200)
    return res.body
  }

  beforeAll(async () => {
    // authorized, captured in part, refunded in part under a key
    const held = await charge('4242424242424242', '987', { capture: false })
    expect((await keep(t.sk.post(`/v2/charges/${held.id}/capture`, { amount: 600 }))).body.captured).toBe(true)
    const part = await keep(
      t.sk.post(`/v2/charges/${held.id}/refund`, { amount: 100 }, { 'idempotency-key': 'cd-refund' }),
    )
    expect(part.body.amount_refunded).toBe(100)
    // a saved card charged with its customer and a security code, under a key, then refunded
    const cus = await keep(t.sk.post('/v2/customers/', { email: 'charged@example.com', description: 'Payer' }))
    const saved = await keep(
      t.sk.post('/v2/sources/', { type: 'card', card: { ...TEST_CARD, number: '5555555555554444', cvc: '4321' } }),
    )
    expect((await keep(t.sk.post(`/v2/customers/${cus.body.id}/sources`, { source: saved.body.id }))).status).toBe(200)
    const again = await keep(
      t.sk.post(
        '/v2/charges/',
        { amount: 800, currency: 'usd', source: saved.body.id, customer: cus.body.id, cvc: '4321' },
        { 'idempotency-key': 'cd-charge' },
      ),
    )
    expect(again.body.status, again.text).toBe('succeeded')
    expect((await keep(t.sk.post(`/v2/charges/${again.body.id}/refund`, {}))).body.status).toBe('refunded')
    // 3-D Secure: approved, then refunded; authenticated, then declined
    const secure = await charge('4000000000003220', '987')
    expect(secure.status).toBe('pending')
    expect((await approve(secure.id)).status).toBe('succeeded')
    expect((await keep(t.sk.post(`/v2/charges/${secure.id}/refund`, {}))).body.status).toBe('refunded')
    const refused = await charge('4000000000003246', '4321')
    expect((await approve(refused.id)).failure_data.code).toBe('card_declined')
    // declined at once, and a security code found incorrect
    expect((await charge('4000000000009987', '987')).failure_data.code).toBe('lost_card')
    expect((await charge('4000000000000127', '4321')).failure_data.code).toBe('incorrect_cvc')
    for (const path of ['/v2/charges/?limit=100', '/v2/events/?limit=100', '/v2/deliveries/?limit=100']) {
      expect((await keep(t.sk.get(path))).status).toBe(200)
    }
  })

  it('no response, log line or stored row holds one: charges, refunds, events and notify calls included', async () => {
    for (const res of answers) expect(leaks(res.text), res.text).toEqual([])
    for (const line of t.logs) expect(leaks(line), line).toEqual([])
    const rows = await grepStoreFor(t.db, leaks)
    expect(rows.get('charges')).toBeGreaterThanOrEqual(6)
    expect(rows.get('refunds')).toBeGreaterThanOrEqual(3)
    expect(rows.get('events')).toBeGreaterThanOrEqual(12)
    expect(rows.get('deliveries')).toBeGreaterThanOrEqual(10)
    expect(rows.get('idempotency_keys')).toBeGreaterThanOrEqual(2)
  })
})
