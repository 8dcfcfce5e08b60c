import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, client, type Json, REDIRECT } from '../helpers/app.js'
import { type Harness, harness, type Service } from './notify-harness.js'

let h: Harness
let s: Service
beforeAll(async () => {
  h = await harness()
  // no worker: the calls stay queued, which is all these tests look at
  s = await h.open()
})
afterAll(() => h.close())

const NOTIFY = 'http://127.0.0.1:9/never-called'

/**
 * A charge's events, newest first, are `types`; each has its notify call queued, whose body (what
 * the worker will send) is the event exactly as GET /v2/events/:id shows it. Returns the events.
 */
async function expectQueued(c: Client, chargeId: string, types: string[]): Promise<Json[]> {
  const events = (await c.get(`/v2/events/?charge=${chargeId}`)).body.data as Json[]
  expect(events.map((e) => e.type)).toEqual(types)
  const deliveries = (await c.get(`/v2/deliveries/?charge=${chargeId}`)).body.data as Json[]
  expect(deliveries.map((d) => d.event)).toEqual(events.map((e) => e.id))
  for (const [i, e] of events.entries()) {
    expect(deliveries[i]).toMatchObject({ event_type: e.type, url: NOTIFY, status: 'pending', attempt_count: 0 })
    const shown = await c.get(`/v2/events/${e.id}`)
    expect(shown.status).toBe(200)
    const queued = await s.db.query<{ payload: string }>('SELECT payload FROM deliveries WHERE id = $1', [
      deliveries[i].id,
    ])
    expect(JSON.parse(queued.rows[0]?.payload as string), e.type).toEqual(shown.body)
  }
  return events
}

/** A new source with redirect.notify (a card by default), and a charge of it. */
async function notifyingCharge(c: Client, source: object = cardSource(), charge: object = {}): Promise<Json> {
  const src = await c.post('/v2/sources/', { ...source, redirect: { ...REDIRECT, notify: NOTIFY } })
  expect(src.status, src.text).toBe(200)
  const ch = await c.post('/v2/charges/', { amount: 900, currency: 'usd', source: src.body.id, ...charge })
  expect(ch.status, ch.text).toBe(201)
  return ch.body
}

describe('every change of a charge queues its notify call, carrying the event', () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  /** The payer's answer on the hosted page, posted by its form as a browser does. */
  async function answerPage(ch: Json, decision: 'approve' | 'decline') {
    const url = new URL(ch.source.action.url)
    const token = url.searchParams.get('token') as string
    const res = await client(s.app).post(url.pathname, new URLSearchParams({ token, decision }).toString(), form)
    expect(res.status, res.text).toBe(303)
    expect(res.headers.location).toBe(decision === 'approve' ? REDIRECT.success : REDIRECT.fail)
  }

  it('the payer approves or declines on the hosted page', async () => {
    const approved = await notifyingCharge(s.sk, cardSource({ number: '4000000000003220' }))
    expect(approved.status).toBe('pending')
    await answerPage(approved, 'approve')
    const [succeeded] = await expectQueued(s.sk, approved.id, ['charge.succeeded', 'charge.pending'])
    expect(succeeded.data.object.status).toBe('succeeded')

    const declined = await notifyingCharge(s.sk, cardSource({ number: '4000000000003220' }))
    await answerPage(declined, 'decline')
    const [failed] = await expectQueued(s.sk, declined.id, ['charge.failed', 'charge.pending'])
    expect(failed.data.object.failure_data.code).toBe('authentication_failed')
  })

  it('a linked bank account: each OTP answer, accepted or declined by the bank', async () => {
    const src = await s.sk.post('/v2/sources/', { type: 'transfer_a', redirect: { ...REDIRECT, notify: NOTIFY } })
    const cus = await s.sk.post('/v2/customers/', { email: 'otp@example.com', description: 'OTP payer' })
    expect((await s.sk.post(`/v2/customers/${cus.body.id}/sources`, { source: src.body.id })).status).toBe(200)
    const charge = async () => {
      const ch = await s.sk.post('/v2/charges/', {
        amount: 900,
        currency: 'php',
        source: src.body.id,
        customer: cus.body.id,
      })
      expect(ch.status, ch.text).toBe(201)
      return ch.body
    }
    // the first payment links the account on the bank's page
    await answerPage(await charge(), 'approve')
    for (const [otp, type, status] of [
      ['123456', 'charge.succeeded', 'succeeded'],
      ['000000', 'charge.failed', 'failed'],
    ]) {
      const ch = await charge()
      expect(ch.source.action.type).toBe('verify_otp')
      const verified = await s.sk.post(`/v2/charges/${ch.id}/verify`, {
        confirmation_id: ch.source.action.confirmation_id,
        otp,
      })
      expect(verified.status, verified.text).toBe(200)
      const [answered] = await expectQueued(s.sk, ch.id, [type as string, 'charge.pending'])
      expect(answered.data.object.status).toBe(status)
    }
  })

  it('a void', async () => {
    const ch = await notifyingCharge(s.sk, cardSource(), { capture: false })
    expect((await s.sk.post(`/v2/charges/${ch.id}/void`, {})).body.status).toBe('voided')
    const [voided] = await expectQueued(s.sk, ch.id, ['charge.voided', 'charge.succeeded'])
    expect(voided.data.object.status).toBe('voided')
  })

  it('a payer who never answers: the sweep fails the charge with payment_expired', async () => {
    // an account of its own, whose test clock alone moves on
    const sk = client(s.app, (await s.app.services.accounts.create('Expiry account')).sk_test_key)
    const ch = await notifyingCharge(sk, { type: 'wallet_e' }, { currency: 'php' })
    expect(ch.status).toBe('pending')
    expect((await sk.post('/v2/test/clock/advance', { seconds: 24 * 3600 + 1 })).status).toBe(200)
    expect(await s.app.services.charges.expireAbandoned(24 * 3600 * 1000)).toBe(1)
    const [failed] = await expectQueued(sk, ch.id, ['charge.failed', 'charge.pending'])
    expect(failed.data.object.failure_data.code).toBe('payment_expired')
  })

  it('a refund the processor did not answer, settled by the recovery sweep', async () => {
    const ch = await notifyingCharge(s.sk)
    const refund = await s.sk.post(`/v2/charges/${ch.id}/refund`, {}, { 'jackdaw-test-fault': 'processor_timeout' })
    expect(refund.status, refund.text).toBe(200)
    expect(refund.body.refunds[0].status).toBe('pending')
    // nothing changed yet, so nothing more is queued
    await expectQueued(s.sk, ch.id, ['charge.succeeded'])
    // the refund's process is taken for dead a grace later
    await s.db.query("UPDATE refunds SET pending_since = now() - interval '1 hour' WHERE charge_id = $1", [ch.id])
    expect(await s.app.services.charges.recoverInterrupted(1000)).toBeGreaterThan(0)
    const [refunded] = await expectQueued(s.sk, ch.id, ['charge.refunded', 'charge.succeeded'])
    expect(refunded.data.object).toMatchObject({ status: 'refunded', amount_refunded: 900 })
  })
})
