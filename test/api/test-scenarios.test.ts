import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, type Json, REDIRECT, type TestApp, testApp } from '../helpers/app.js'

// an hour's payer timeout, swept every minute: a charge expires only when a clock moves past it
const PAYER_TIMEOUT_MS = 3_600_000

let t: TestApp
beforeAll(async () => {
  t = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: PAYER_TIMEOUT_MS } })
})
afterAll(() => t.close())

const run = (name: string, body: Json = {}) => t.sk.post(`/v2/test/scenarios/${name}`, body)

/** The types of a charge's events, oldest first, as the API lists them. */
async function eventTypes(c: Client, chargeId: string): Promise<string[]> {
  const res = await c.get(`/v2/events/?charge=${chargeId}&limit=100`)
  expect(res.status).toBe(200)
  return res.body.data.map((e: Json) => e.type).reverse()
}

async function until(probe: () => Promise<boolean>) {
  for (let i = 0; i < 200 && !(await probe()); i++) await new Promise((r) => setTimeout(r, 25))
}

/** The same steps as each scenario, taken by a client over the API; answers its charges' ids. */
const byClient: Record<string, (c: Client) => Promise<string[]>> = {
  async 'charge.succeeded'(c) {
    const src = await c.post('/v2/sources/', cardSource())
    return [(await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })).body.id]
  },
  async 'charge.captured'(c) {
    const src = await c.post('/v2/sources/', cardSource())
    const ch = await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture: false })
    await c.post(`/v2/charges/${ch.body.id}/capture`)
    return [ch.body.id]
  },
  async 'charge.voided'(c) {
    const src = await c.post('/v2/sources/', cardSource())
    const ch = await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture: false })
    await c.post(`/v2/charges/${ch.body.id}/void`)
    return [ch.body.id]
  },
  async 'charge.failed'(c) {
    const src = await c.post('/v2/sources/', cardSource({ number: '4000000000000002' }))
    return [(await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })).body.id]
  },
  async 'charge.refunded'(c) {
    const [id] = await byClient['charge.succeeded']!(c)
    await c.post(`/v2/charges/${id}/refund`)
    return [id as string]
  },
  async 'charge.partially_refunded'(c) {
    const [id] = await byClient['charge.succeeded']!(c)
    await c.post(`/v2/charges/${id}/refund`, { amount: 500 })
    return [id as string]
  },
  async 'charge.3ds_approved'(c) {
    return [await threeDs(c, 'approve')]
  },
  async 'charge.3ds_declined'(c) {
    return [await threeDs(c, 'decline')]
  },
  async 'charge.payment_expired'(c) {
    const src = await c.post('/v2/sources/', cardSource({ number: '4000000000003220' }))
    const ch = await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    await c.post('/v2/test/clock/advance', { seconds: PAYER_TIMEOUT_MS / 1000 + 1 })
    await until(async () => (await c.get(`/v2/charges/${ch.body.id}`)).body.status !== 'pending')
    return [ch.body.id]
  },
  async 'charge.otp_verified'(c) {
    const cus = await c.post('/v2/customers/', { email: 'otp@example.com', description: 'OTP payer' })
    const src = await c.post('/v2/sources/', { type: 'transfer_a', redirect: REDIRECT })
    await c.post(`/v2/customers/${cus.body.id}/sources`, { source: src.body.id })
    const body = { amount: 1000, currency: 'usd', source: src.body.id, customer: cus.body.id }
    const first = await c.post('/v2/charges/', body)
    await c.post(`/v2/test/charges/${first.body.id}/authorize`, { decision: 'approve' })
    const second = await c.post('/v2/charges/', body)
    const confirmation_id = second.body.source.action.confirmation_id
    await c.post(`/v2/charges/${second.body.id}/verify`, { confirmation_id, otp: '123456' })
    return [first.body.id, second.body.id]
  },
}

async function threeDs(c: Client, decision: string) {
  const src = await c.post('/v2/sources/', cardSource({ number: '4000000000003220' }))
  const ch = await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
  expect(ch.body.status).toBe('pending')
  await c.post(`/v2/test/charges/${ch.body.id}/authorize`, { decision })
  return ch.body.id as string
}

/** What each scenario's charge is once run. */
const EXPECTED: Record<string, Json> = {
  'charge.succeeded': { status: 'succeeded', authorized: true, captured: true },
  'charge.captured': { status: 'succeeded', authorized: true, captured: true },
  'charge.voided': { status: 'voided', authorized: false, captured: false },
  'charge.failed': { status: 'failed', failure_data: { code: 'card_declined' } },
  'charge.refunded': { status: 'refunded', amount_refunded: 1000 },
  'charge.partially_refunded': { status: 'succeeded', amount_refunded: 500 },
  'charge.3ds_approved': { status: 'succeeded', authorized: true, captured: true },
  'charge.3ds_declined': { status: 'failed', failure_data: { code: 'authentication_failed' } },
  'charge.payment_expired': { status: 'failed', failure_data: { code: 'payment_expired' } },
  'charge.otp_verified': { status: 'succeeded', authorized: true, captured: true },
}

describe('each charge scenario', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}: its charge reads back as answered, with the events a client doing the same gets`, async () => {
      const res = await run(name)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body).toMatchObject({ object: 'scenario_run', scenario: name })
      const { charge, source } = res.body.objects
      expect(charge).toMatchObject({ object: 'charge', amount: 1000, currency: 'usd', livemode: false, ...expected })
      expect(charge.id).toMatch(/^ch_[0-9a-f]{32}$/)

      // the answer is what the API shows of the objects now
      expect((await t.sk.get(`/v2/charges/${charge.id}`)).body).toEqual(charge)
      expect((await t.sk.get(`/v2/sources/${source.id}`)).body).toEqual(source)
      expect(source).toMatchObject({ used: true })
      expect(charge.source.id).toBe(source.id)

      const theirs = await byClient[name]!(t.sk)
      const mine = [...(res.body.objects.linking_charge ? [res.body.objects.linking_charge.id] : []), charge.id]
      expect(mine).toHaveLength(theirs.length)
      for (const [i, id] of mine.entries()) {
        const types = await eventTypes(t.sk, id)
        expect(types.length).toBeGreaterThan(0)
        expect(types).toEqual(await eventTypes(t.sk, theirs[i] as string))
      }
      const clientCharge = (await t.sk.get(`/v2/charges/${theirs.at(-1)}`)).body
      expect(clientCharge).toMatchObject(expected)
    })
  }

  it('charge.refunded and charge.partially_refunded answer the refund they made', async () => {
    const full = (await run('charge.refunded')).body.objects
    expect(full.refund).toMatchObject({ object: 'refund', amount: 1000, status: 'succeeded' })
    expect(full.charge.refunds).toEqual([full.refund])
    const part = (await run('charge.partially_refunded', { amount: 999 })).body.objects
    expect(part.refund).toMatchObject({ object: 'refund', amount: 499, status: 'succeeded' })
    expect(part.charge).toMatchObject({ status: 'succeeded', amount: 999, amount_refunded: 499 })
  })

  it('charge.payment_expired moves the test clock past the payer timeout and answers it', async () => {
    const before = (await t.sk.get('/v2/test/clock')).body.offset_seconds
    const res = await run('charge.payment_expired')
    expect(res.body.objects.test_clock).toMatchObject({ object: 'test_clock', offset_seconds: before + 3601 })
    expect((await t.sk.get('/v2/test/clock')).body.offset_seconds).toBe(before + 3601)
    const events = await eventTypes(t.sk, res.body.objects.charge.id)
    expect(events).toEqual(['charge.pending', 'charge.failed'])
  })

  it('charge.otp_verified links the bank account on a first charge, then confirms a second by OTP', async () => {
    const { objects } = (await run('charge.otp_verified')).body
    expect(objects.linking_charge).toMatchObject({ status: 'succeeded' })
    expect(objects.source).toMatchObject({ type: 'transfer_a', vaulted: true, used: true })
    expect(objects.source.bank_account.account_number).toMatch(/\d{4}$/)
    expect(objects.customer.sources.map((s: Json) => s.id)).toEqual([objects.source.id])
    expect(await eventTypes(t.sk, objects.charge.id)).toEqual(['charge.pending', 'charge.succeeded'])
    expect((await t.sk.get(`/v2/customers/${objects.customer.id}`)).body).toEqual(objects.customer)
  })

  it('customer.source_attached attaches a new card source to a new customer, with no charge', async () => {
    const before = (await t.sk.get('/v2/charges/?limit=100')).body.data.length
    const res = await run('customer.source_attached')
    expect(res.status).toBe(200)
    const { customer, source, charge } = res.body.objects
    expect(charge).toBeUndefined()
    expect(source).toMatchObject({ type: 'card', used: true, vaulted: true })
    expect(customer.sources).toEqual([source])
    expect((await t.sk.get(`/v2/customers/${customer.id}`)).body).toEqual(customer)
    expect((await t.sk.get('/v2/charges/?limit=100')).body.data.length).toBe(before)
  })
})
