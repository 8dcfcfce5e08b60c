import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_AMOUNT } from '../../src/domain/money.js'
import {
  type Client,
  cardSource,
  client,
  type Json,
  REDIRECT,
  type Reply,
  type TestApp,
  testApp,
} from '../helpers/app.js'
import { SPEC_REDIRECT_TYPES, SPEC_SOURCE_TYPES } from '../helpers/spec.js'

/**
 * The charge lifecycle through HTTP: every source type, every documented test card, capture,
 * void, refund, OTP verification, the create-charge validation and every refused transition.
 */

let t: TestApp
/** a second account of the same service: its charges must be invisible to the first */
let other: Client
beforeAll(async () => {
  t = await testApp()
  const acct = await t.app.services.accounts.create('Other shop')
  other = client(t.app, acct.sk_test_key)
})
afterAll(() => t.close())
const NON_CARD_TYPES = SPEC_REDIRECT_TYPES
const ALL_TYPES = SPEC_SOURCE_TYPES
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/
const STATUSES = ['pending', 'succeeded', 'failed', 'voided', 'refunded']

const CHARGE_FIELDS = [
  'object',
  'id',
  'amount',
  'amount_refunded',
  'authorized',
  'captured',
  'currency',
  'statement_descriptor',
  'description',
  'source',
  'refunds',
  'status',
  'livemode',
  'created_at',
  'updated_at',
]
const CHARGE_OPTIONAL = ['metadata', 'failure_data']
const REFUND_FIELDS = ['object', 'id', 'amount', 'currency', 'reason', 'status', 'created_at']
const SOURCE_FIELDS = ['object', 'id', 'type', 'vaulted', 'used', 'livemode', 'created_at', 'updated_at']
const SOURCE_OPTIONAL = ['card', 'bank_account', 'redirect', 'owner', 'metadata', 'require_auth', 'action']

function isPlainObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Every field of the interface's Refund table, with its type, and nothing internal. */
function expectRefundShape(r: Json, currency: string) {
  for (const f of REFUND_FIELDS) expect(r, `refund.${f}`).toHaveProperty(f)
  expect(Object.keys(r).every((k) => [...REFUND_FIELDS, 'updated_at'].includes(k))).toBe(true)
  expect(r.object).toBe('refund')
  expect(r.id).toMatch(/^re_[0-9a-f]{32}$/)
  expect(Number.isInteger(r.amount) && r.amount > 0).toBe(true)
  expect(r.currency).toBe(currency)
  expect(typeof r.reason).toBe('string')
  expect(r.reason.length).toBeGreaterThan(0)
  expect(['pending', 'succeeded', 'failed']).toContain(r.status)
  expect(r.created_at).toMatch(ISO)
  if (r.updated_at !== undefined) expect(r.updated_at).toMatch(ISO)
}

/** Every field of the interface's Charge table, with its type, and no internal column leaking out. */
function expectChargeShape(c: Json) {
  for (const f of CHARGE_FIELDS) expect(c, `charge.${f}`).toHaveProperty(f)
  const unexpected = Object.keys(c).filter((k) => !CHARGE_FIELDS.includes(k) && !CHARGE_OPTIONAL.includes(k))
  expect(unexpected).toEqual([])
  expect(c.object).toBe('charge')
  expect(c.id).toMatch(/^ch_[0-9a-f]{32}$/)
  expect(Number.isInteger(c.amount)).toBe(true)
  expect(Number.isInteger(c.amount_refunded)).toBe(true)
  expect(typeof c.authorized).toBe('boolean')
  expect(typeof c.captured).toBe('boolean')
  expect(c.currency).toMatch(/^[a-z]{3}$/)
  expect(typeof c.statement_descriptor).toBe('string')
  expect(typeof c.description).toBe('string')
  expect(Array.isArray(c.refunds)).toBe(true)
  for (const r of c.refunds) expectRefundShape(r, c.currency)
  expect(STATUSES).toContain(c.status)
  expect(typeof c.livemode).toBe('boolean')
  expect(c.created_at).toMatch(ISO)
  expect(c.updated_at).toMatch(ISO)
  expect(c.updated_at >= c.created_at).toBe(true)
  if (c.metadata !== undefined) expect(isPlainObject(c.metadata)).toBe(true)
  if (c.failure_data !== undefined) expect(isPlainObject(c.failure_data)).toBe(true)

  const s = c.source
  expect(isPlainObject(s)).toBe(true)
  for (const f of SOURCE_FIELDS) expect(s, `source.${f}`).toHaveProperty(f)
  expect(Object.keys(s).filter((k) => !SOURCE_FIELDS.includes(k) && !SOURCE_OPTIONAL.includes(k))).toEqual([])
  expect(s.object).toBe('source')
  expect(s.id).toMatch(/^src_[0-9a-f]{32}$/)
  expect(ALL_TYPES).toContain(s.type)
  expect(typeof s.vaulted).toBe('boolean')
  expect(typeof s.used).toBe('boolean')
  expect(s.livemode).toBe(c.livemode)
  expect(s.created_at).toMatch(ISO)
  expect(s.updated_at).toMatch(ISO)
  if (s.require_auth !== undefined) expect(typeof s.require_auth).toBe('boolean')
  if (s.action !== undefined) {
    expect(isPlainObject(s.action)).toBe(true)
    expect(['redirect_to_url', 'verify_otp']).toContain(s.action.type)
  }
  if (s.card !== undefined) {
    for (const f of [
      'object',
      'id',
      'name',
      'last4',
      'exp_month',
      'exp_year',
      'brand',
      'country',
      'cvc_checked',
      'funding',
      'issuing_bank',
    ]) {
      expect(typeof s.card[f], `card.${f}`).toBe('string')
    }
    expect(s.card).not.toHaveProperty('number')
    expect(s.card).not.toHaveProperty('cvc')
    expect(s.card.last4).toMatch(/^\d{4}$/)
  }
  if (s.bank_account !== undefined) {
    for (const f of [
      'reference_id',
      'bank_type',
      'bank_code',
      'account_name',
      'account_number',
      'account_type',
      'expires_at',
    ]) {
      expect(typeof s.bank_account[f], `bank_account.${f}`).toBe('string')
    }
  }
}

/** The flags, amounts and fields that each status implies. */
function expectConsistent(c: Json) {
  expectChargeShape(c)
  const live = c.refunds.filter((r: Json) => r.status !== 'failed')
  expect(c.amount_refunded).toBe(live.reduce((sum: number, r: Json) => sum + r.amount, 0))
  expect(c.amount_refunded).toBeLessThanOrEqual(c.amount)
  expect(c.source.used).toBe(true)
  switch (c.status) {
    case 'pending':
      expect(c.authorized).toBe(false)
      expect(c.captured).toBe(false)
      expect(c.source.action).toBeDefined()
      expect(c.failure_data).toBeUndefined()
      expect(c.refunds).toEqual([])
      break
    case 'succeeded':
      expect(c.authorized).toBe(true)
      expect(c.source.action).toBeUndefined()
      expect(c.failure_data).toBeUndefined()
      if (c.captured) expect(c.amount_refunded).toBeLessThan(c.amount)
      else expect(c.refunds).toEqual([])
      break
    case 'failed':
      expect(c.authorized).toBe(false)
      expect(c.captured).toBe(false)
      expect(c.source.action).toBeUndefined()
      expect(c.refunds).toEqual([])
      expect(c.failure_data).toMatchObject({
        code: expect.any(String),
        reason: expect.any(String),
        next_steps: expect.any(String),
        provider_response: expect.any(Object),
      })
      break
    case 'voided':
      expect(c.authorized).toBe(false)
      expect(c.captured).toBe(false)
      expect(c.source.action).toBeUndefined()
      expect(c.failure_data).toBeUndefined()
      expect(c.refunds).toEqual([])
      break
    case 'refunded':
      expect(c.captured).toBe(true)
      expect(c.amount_refunded).toBe(c.amount)
      expect(c.source.action).toBeUndefined()
      expect(c.failure_data).toBeUndefined()
      break
  }
}

function sourceBody(type: string, card: Record<string, unknown> = {}) {
  return type === 'card' ? cardSource(card) : { type, redirect: REDIRECT }
}

async function newSource(body: object, as: Client = t.sk): Promise<Json> {
  const res = await as.post('/v2/sources/', body)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body
}

async function create(body: object, extra: object = {}, as: Client = t.sk): Promise<Reply> {
  const src = await newSource(body, as)
  return as.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.id, ...extra })
}

/** A created charge: answered 201, well formed and consistent, and stored as answered. */
async function created(body: object, extra: object = {}): Promise<Json> {
  const res = await create(body, extra)
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  expectConsistent(res.body)
  const stored = await t.sk.get(`/v2/charges/${res.body.id}`)
  expect(stored.status).toBe(200)
  expect(stored.body).toEqual(res.body)
  return res.body
}

async function ok(res: Reply): Promise<Json> {
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expectConsistent(res.body)
  const stored = await t.sk.get(`/v2/charges/${res.body.id}`)
  expect(stored.body).toEqual(res.body)
  return res.body
}

function expectError(res: Reply, status: number, code: string, param?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body.error.code).toBe(code)
  if (param !== undefined) expect(res.body.error.param).toBe(param)
}

const decide = (id: string, decision: 'approve' | 'decline', as: Client = t.sk) =>
  as.post(`/v2/test/charges/${id}/authorize`, { decision })

async function getCharge(id: string): Promise<Json> {
  const res = await t.sk.get(`/v2/charges/${id}`)
  expect(res.status).toBe(200)
  return res.body
}

/** A refused operation leaves the charge exactly as it was. */
async function refusedUnchanged(id: string, call: () => Promise<Reply>, status: number, code: string) {
  const before = await getCharge(id)
  expectError(await call(), status, code)
  expect(await getCharge(id)).toEqual(before)
}

async function customer(): Promise<Json> {
  const res = await t.sk.post('/v2/customers/', { email: 'payer@example.com', description: 'payer' })
  expect(res.status).toBe(201)
  return res.body
}

async function vaulted(body: object): Promise<{ src: Json; cus: Json }> {
  const src = await newSource(body)
  const cus = await customer()
  const att = await t.sk.post(`/v2/customers/${cus.id}/sources`, { source: src.id })
  expect(att.status, JSON.stringify(att.body)).toBe(200)
  return { src, cus }
}

describe('card charges: one per test card outcome', () => {
  const SUCCEEDS: [string, string, string][] = [
    ['4242424242424242', 'visa', 'credit'],
    ['5555555555554444', 'mastercard', 'credit'],
    ['4000056655665556', 'visa', 'debit'],
    ['5200828282828210', 'mastercard', 'debit'],
    ['378282246310005', 'amex', 'credit'],
    ['6011111111111117', 'discover', 'prepaid'],
  ]
  it.each(SUCCEEDS)('%s succeeds at once, captured, cvc passed', async (number, brand, funding) => {
    const c = await created(sourceBody('card', { number, cvc: number.length === 15 ? '1234' : '123' }))
    expect(c).toMatchObject({
      status: 'succeeded',
      authorized: true,
      captured: true,
      amount: 1000,
      amount_refunded: 0,
      refunds: [],
      livemode: false,
    })
    expect(c.failure_data).toBeUndefined()
    expect(c.source).toMatchObject({ type: 'card', used: true, vaulted: false, require_auth: true })
    expect(c.source.action).toBeUndefined()
    expect(c.source.card).toMatchObject({ last4: number.slice(-4), brand, funding, cvc_checked: 'pass' })
    expect(JSON.stringify(c)).not.toContain(number)
  })

  it('an unlisted valid number succeeds, with unknown funding', async () => {
    const c = await created(sourceBody('card', { number: '4111111111111111' }))
    expect(c.status).toBe('succeeded')
    expect(c.source.card).toMatchObject({ funding: 'unknown', country: 'unknown', brand: 'visa' })
  })

  const DECLINES: [string, string][] = [
    ['4000000000000002', 'card_declined'],
    ['4000000000009995', 'insufficient_funds'],
    ['4000000000009987', 'lost_card'],
    ['4000000000009979', 'stolen_card'],
    ['4000000000000069', 'expired_card'],
    ['4000000000000127', 'incorrect_cvc'],
    ['4000000000000119', 'processing_error'],
    ['4000000000000036', 'processor_timeout'],
  ]
  it.each(DECLINES)('%s is a 201 failed charge with failure_data.code %s', async (number, code) => {
    const c = await created(sourceBody('card', { number }))
    expect(c).toMatchObject({ status: 'failed', authorized: false, captured: false, amount_refunded: 0 })
    expect(c.failure_data.code).toBe(code)
    expect(c.source.used).toBe(true)
    expect(c.source.action).toBeUndefined()
    if (code === 'incorrect_cvc') expect(c.source.card.cvc_checked).toBe('fail')
    else if (code !== 'processor_timeout') expect(c.source.card.cvc_checked).toBe('pass')
    // the source was consumed by the failed charge
    const again = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: c.source.id })
    expectError(again, 400, 'source_used', 'source')
    // a failed charge is stored and listed
    const list = await t.sk.get('/v2/charges/?limit=5')
    expect(list.body.data.map((x: Json) => x.id)).toContain(c.id)
  })

  it('4000000000003220 waits for 3-D Secure, then succeeds on approval', async () => {
    const c = await created({ ...sourceBody('card', { number: '4000000000003220' }), redirect: REDIRECT })
    expect(c).toMatchObject({ status: 'pending', authorized: false, captured: false })
    expect(c.source.action.type).toBe('redirect_to_url')
    expect(c.source.action.url).toMatch(new RegExp(`/v2/hosted/charges/${c.id}\\?token=[0-9a-f]{32,}$`))
    expect(c.source.card.cvc_checked).toBe('unchecked')
    const done = await ok(await decide(c.id, 'approve'))
    expect(done).toMatchObject({ status: 'succeeded', authorized: true, captured: true })
    expect(done.source.action).toBeUndefined()
    expect(done.source.card.cvc_checked).toBe('pass')
    expect(done.updated_at > c.updated_at).toBe(true)
  })

  it('4000000000003220 declined at 3-D Secure fails with authentication_failed', async () => {
    const c = await created(sourceBody('card', { number: '4000000000003220' }))
    expect(c.status).toBe('pending')
    const done = await ok(await decide(c.id, 'decline'))
    expect(done).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(done.failure_data.code).toBe('authentication_failed')
  })

  it('4000000000003246 authenticates, then declines', async () => {
    const c = await created(sourceBody('card', { number: '4000000000003246' }))
    expect(c.status).toBe('pending')
    expect(c.source.action.type).toBe('redirect_to_url')
    const done = await ok(await decide(c.id, 'approve'))
    expect(done).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(done.failure_data.code).toBe('card_declined')
  })

  it('a vaulted 4000000000003246 skips 3-D Secure and is declined at once', async () => {
    const { src, cus } = await vaulted(sourceBody('card', { number: '4000000000003246' }))
    const res = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.id, customer: cus.id })
    expect(res.status).toBe(201)
    expectConsistent(res.body)
    expect(res.body.status).toBe('failed')
    expect(res.body.failure_data.code).toBe('card_declined')
    expect(res.body.source.action).toBeUndefined()
  })

  it('require_auth false on 4000000000003220 succeeds at once', async () => {
    const c = await created(sourceBody('card', { number: '4000000000003220' }), { require_auth: false })
    expect(c).toMatchObject({ status: 'succeeded', authorized: true, captured: true })
    expect(c.source.require_auth).toBe(false)
    expect(c.source.action).toBeUndefined()
  })

  it('a vaulted 4000000000003220 skips 3-D Secure, even with require_auth true, and can be charged again', async () => {
    const { src, cus } = await vaulted(sourceBody('card', { number: '4000000000003220' }))
    for (let i = 0; i < 2; i++) {
      const res = await t.sk.post('/v2/charges/', {
        amount: 700,
        currency: 'usd',
        source: src.id,
        customer: cus.id,
        require_auth: true,
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expectConsistent(res.body)
      expect(res.body).toMatchObject({ status: 'succeeded', authorized: true, captured: true, amount: 700 })
      expect(res.body.source).toMatchObject({ id: src.id, vaulted: true, used: true })
      expect(res.body.source.action).toBeUndefined()
    }
  })
})

describe('metadata of a charge', () => {
  it('comes back with its keys in the order sent: created, retrieved, listed', async () => {
    const metadata = { zone: 'north', a: 'first', middle: 'x' }
    const c = await created(sourceBody('card'), { metadata })
    expect(Object.keys(c.metadata)).toEqual(['zone', 'a', 'middle'])
    const listed = (await t.sk.get('/v2/charges/?limit=5')).body.data.find((x: Json) => x.id === c.id)
    expect(Object.keys(listed.metadata)).toEqual(['zone', 'a', 'middle'])
  })
})

describe('non-card sources: one lifecycle per type', () => {
  it.each(NON_CARD_TYPES)('%s: pending with a hosted page, approved, refunded in part then in full', async (type) => {
    const c = await created(sourceBody(type), { metadata: { order: '42' } })
    expect(c).toMatchObject({
      status: 'pending',
      authorized: false,
      captured: false,
      amount_refunded: 0,
      refunds: [],
      metadata: { order: '42' },
    })
    expect(c.source).toMatchObject({ type, used: true, vaulted: false, redirect: REDIRECT })
    expect(c.source.action.type).toBe('redirect_to_url')
    const url = new URL(c.source.action.url)
    expect(url.pathname).toBe(`/v2/hosted/charges/${c.id}`)
    expect(url.searchParams.get('token')).toMatch(/^[0-9a-f]{32,}$/)
    expect(c.source.bank_account).toBeUndefined()

    const done = await ok(await decide(c.id, 'approve'))
    expect(done).toMatchObject({ status: 'succeeded', authorized: true, captured: true, amount: 1000 })
    expect(done.source.action).toBeUndefined()
    expect(done.updated_at > c.updated_at).toBe(true)
    if (type === 'transfer_a') {
      expect(done.source.bank_account).toMatchObject({ bank_type: 'transfer_a', bank_code: expect.any(String) })
    } else expect(done.source.bank_account).toBeUndefined()

    const r1 = await ok(await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 250, reason: 'damaged' }))
    expect(r1).toMatchObject({ status: 'succeeded', amount_refunded: 250, captured: true })
    expect(r1.refunds).toHaveLength(1)
    expect(r1.refunds[0]).toMatchObject({ amount: 250, currency: 'usd', reason: 'damaged', status: 'succeeded' })
    expect(r1.updated_at > done.updated_at).toBe(true)

    const r2 = await ok(await t.sk.post(`/v2/charges/${c.id}/refund`))
    expect(r2).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
    expect(r2.refunds.map((r: Json) => r.amount).sort((a: number, b: number) => a - b)).toEqual([250, 750])
    expect(new Set(r2.refunds.map((r: Json) => r.id)).size).toBe(2)
  })

  it.each(NON_CARD_TYPES)('%s: declined by the payer fails with payment_declined', async (type) => {
    const c = await created(sourceBody(type))
    const done = await ok(await decide(c.id, 'decline'))
    expect(done).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(done.failure_data.code).toBe('payment_declined')
    expect(done.source.bank_account).toBeUndefined()
  })

  it.each(NON_CARD_TYPES)('%s: capture false holds the amount until captured', async (type) => {
    const c = await created(sourceBody(type), { capture: false })
    const held = await ok(await decide(c.id, 'approve'))
    expect(held).toMatchObject({ status: 'succeeded', authorized: true, captured: false })
    const cap = await ok(await t.sk.post(`/v2/charges/${c.id}/capture`))
    expect(cap).toMatchObject({ status: 'succeeded', authorized: true, captured: true, amount: 1000 })
  })

  it('transfer_a: linked on first approval, then charged again by OTP', async () => {
    const { src, cus } = await vaulted(sourceBody('transfer_a'))
    const c1 = await t.sk.post('/v2/charges/', { amount: 500, currency: 'php', source: src.id, customer: cus.id })
    expect(c1.status).toBe(201)
    expectConsistent(c1.body)
    expect(c1.body.source.action.type).toBe('redirect_to_url')
    expect(c1.body.source.bank_account).toBeUndefined()
    const linked = await ok(await decide(c1.body.id, 'approve'))
    expect(linked.status).toBe('succeeded')
    expect(linked.source).toMatchObject({ vaulted: true, used: true })
    expect(linked.source.bank_account.account_number).toMatch(/\d{4}$/)

    const c2 = await t.sk.post('/v2/charges/', { amount: 400, currency: 'php', source: src.id, customer: cus.id })
    expect(c2.status).toBe(201)
    expectConsistent(c2.body)
    expect(c2.body).toMatchObject({ status: 'pending', authorized: false })
    expect(c2.body.source.action).toEqual({ type: 'verify_otp', confirmation_id: expect.any(String) })
    expect(c2.body.source.action.url).toBeUndefined()
    const v = await ok(
      await t.sk.post(`/v2/charges/${c2.body.id}/verify`, {
        confirmation_id: c2.body.source.action.confirmation_id,
        otp: '123456',
      }),
    )
    expect(v).toMatchObject({ status: 'succeeded', authorized: true, captured: true, amount: 400, currency: 'php' })
    expect(v.source.action).toBeUndefined()
    expect(v.updated_at > c2.body.updated_at).toBe(true)

    // the declining test OTP fails the charge
    const c3 = await t.sk.post('/v2/charges/', { amount: 300, currency: 'php', source: src.id, customer: cus.id })
    expect(c3.body.source.action.type).toBe('verify_otp')
    const d = await ok(
      await t.sk.post(`/v2/charges/${c3.body.id}/verify`, {
        confirmation_id: c3.body.source.action.confirmation_id,
        otp: '000000',
      }),
    )
    expect(d).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(d.failure_data.code).toBe('debit_declined')
  })

  it('transfer_a without a customer is linked by its one charge and cannot be charged again', async () => {
    const c = await created(sourceBody('transfer_a'))
    const done = await ok(await decide(c.id, 'approve'))
    expect(done.source.bank_account).toBeDefined()
    const again = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: c.source.id })
    expectError(again, 400, 'source_used', 'source')
  })
})

describe('capture, void and refund', () => {
  it('capture false then full capture', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    expect(c).toMatchObject({ status: 'succeeded', authorized: true, captured: false })
    const cap = await ok(await t.sk.post(`/v2/charges/${c.id}/capture`))
    expect(cap).toMatchObject({ status: 'succeeded', authorized: true, captured: true, amount: 1000 })
    expect(cap.updated_at > c.updated_at).toBe(true)
    const ref = await ok(await t.sk.post(`/v2/charges/${c.id}/refund`))
    expect(ref).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
  })

  it('capture false then partial capture: amount becomes the captured amount, refunds are bounded by it', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    const cap = await ok(await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 600 }))
    expect(cap).toMatchObject({ status: 'succeeded', captured: true, amount: 600, amount_refunded: 0 })
    expectError(await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 601 }), 400, 'amount_too_large', 'amount')
    const all = await ok(await t.sk.post(`/v2/charges/${c.id}/refund`))
    expect(all).toMatchObject({ status: 'refunded', amount: 600, amount_refunded: 600 })
    expect(all.refunds).toHaveLength(1)
    expect(all.refunds[0].amount).toBe(600)
  })

  it('capture of exactly the authorized amount is allowed', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    const cap = await ok(await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 1000 }))
    expect(cap).toMatchObject({ captured: true, amount: 1000 })
  })

  it('void of an authorized, uncaptured charge', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    const v = await ok(await t.sk.post(`/v2/charges/${c.id}/void`))
    expect(v).toMatchObject({ status: 'voided', authorized: false, captured: false, amount_refunded: 0 })
    expect(v.updated_at > c.updated_at).toBe(true)
  })

  it('void of an approved wallet charge held for capture', async () => {
    const c = await created(sourceBody('wallet_b'), { capture: false })
    await ok(await decide(c.id, 'approve'))
    const v = await ok(await t.sk.post(`/v2/charges/${c.id}/void`, {}))
    expect(v.status).toBe('voided')
  })

  it('refunds: default reason, several partials, exact rest, then refunded', async () => {
    const c = await created(sourceBody('card'))
    const r1 = await ok(await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 100 }))
    expect(r1).toMatchObject({ status: 'succeeded', amount_refunded: 100 })
    expect(r1.refunds[0].reason.length).toBeGreaterThan(0)
    const r2 = await ok(await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 200 }))
    expect(r2).toMatchObject({ status: 'succeeded', amount_refunded: 300 })
    expect(r2.refunds).toHaveLength(2)
    const r3 = await ok(await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 700 }))
    expect(r3).toMatchObject({ status: 'refunded', amount_refunded: 1000, captured: true })
    expect(r3.refunds.map((r: Json) => r.amount).sort((a: number, b: number) => a - b)).toEqual([100, 200, 700])
    for (const r of r3.refunds) expectRefundShape(r, 'usd')
  })

  it('refund validation: amount 0 and a reason too long are 422', async () => {
    const c = await created(sourceBody('card'))
    expectError(await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 0 }), 422, 'parameter_invalid', 'amount')
    expectError(
      await t.sk.post(`/v2/charges/${c.id}/refund`, { reason: 'x'.repeat(256) }),
      422,
      'parameter_invalid',
      'reason',
    )
    expectError(await t.sk.post(`/v2/charges/${c.id}/refund`, { amout: 5 }), 422, 'parameter_unknown')
    expect((await getCharge(c.id)).amount_refunded).toBe(0)
  })
})

describe('create charge: validation and rules', () => {
  const post = (body: object) => t.sk.post('/v2/charges/', body)

  async function freshId(type = 'card'): Promise<string> {
    return (await newSource(sourceBody(type))).id
  }

  /** A refused create leaves the source unused and chargeable. */
  async function refused(extra: object, status: number, code: string, param?: string) {
    const id = await freshId()
    const res = await post({ amount: 1000, currency: 'usd', source: id, ...extra })
    expectError(res, status, code, param)
    const src = await t.sk.get(`/v2/sources/${id}`)
    expect(src.body.used).toBe(false)
    return res
  }

  it.each([
    ['amount 0', { amount: 0 }],
    ['a negative amount', { amount: -5 }],
    ['a non-integer amount', { amount: 10.5 }],
    ['an amount as a string', { amount: '1000' }],
    ['an amount over the maximum', { amount: MAX_AMOUNT + 1 }],
  ])('%s is 422 on amount', async (_name, extra) => {
    await refused(extra, 422, 'parameter_invalid', 'amount')
  })

  it('the maximum amount is accepted', async () => {
    const c = await created(sourceBody('card'), { amount: MAX_AMOUNT })
    expect(c.amount).toBe(MAX_AMOUNT)
  })

  // HRK was withdrawn when Croatia took the euro (2023)
  it.each(['ABC', 'US', 'usdd', '12$', '', 'HRK'])('currency %j is 422', async (currency) => {
    await refused({ currency }, 422, 'parameter_invalid', 'currency')
  })

  // ISO 4217 codes that are not money: testing, no currency, precious metals, units of account, funds
  it.each([
    'XXX',
    'xts',
    'XAU',
    'XAG',
    'XPT',
    'XPD',
    'XBA',
    'XBD',
    'XDR',
    'XSU',
    'XUA',
    'BOV',
    'CLF',
    'COU',
    'MXV',
    'UYI',
    'UYW',
    'CHE',
    'CHW',
    'USN',
  ])('currency %s, an ISO 4217 code of no money, is 422', async (currency) => {
    const res = await refused({ currency }, 422, 'parameter_invalid', 'currency')
    expect(res.body.error.message).toBe('currency is not the ISO 4217 code of a currency')
  })

  it('a body its schema refuses also names a currency ISO 4217 does not know', async () => {
    const res = await post({ amount: 0, currency: 'xyz', source: await freshId() })
    expectError(res, 422, 'parameter_invalid', 'amount')
    expect(res.body.error.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual([
      'body.amount',
      'body.currency',
    ])
  })

  it.each([
    ['UsD', 'usd'],
    ['EUR', 'eur'],
    ['jpy', 'jpy'],
    ['KWD', 'kwd'],
    // current ISO 4217 codes that some runtimes' Intl lists lack: the Venezuelan bolívar of 2021,
    // the Zimbabwe gold of 2024
    ['VED', 'ved'],
    ['ZWG', 'zwg'],
  ])('currency %s is returned as %s', async (currency, lower) => {
    const c = await created(sourceBody('card'), { currency })
    expect(c.currency).toBe(lower)
  })

  it('missing required fields are 422 parameter_missing', async () => {
    const id = await freshId()
    expectError(await post({ currency: 'usd', source: id }), 422, 'parameter_missing', 'amount')
    expectError(await post({ amount: 100, source: id }), 422, 'parameter_missing', 'currency')
    expectError(await post({ amount: 100, currency: 'usd' }), 422, 'parameter_missing', 'source')
  })

  it('description defaults to "", keeps a given one, refuses "" and 256 characters', async () => {
    const plain = await created(sourceBody('card'))
    expect(plain.description).toBe('')
    const given = await created(sourceBody('card'), { description: 'Order #1 <b>' })
    expect(given.description).toBe('Order #1 <b>')
    await refused({ description: '' }, 422, 'parameter_invalid', 'description')
    await refused({ description: 'd'.repeat(256) }, 422, 'parameter_invalid', 'description')
    const max = await created(sourceBody('card'), { description: 'd'.repeat(255) })
    expect(max.description).toHaveLength(255)
  })

  it('statement_descriptor: default from the account name, 3 and 100 allowed, 2 and 101 and pattern P refused', async () => {
    const plain = await created(sourceBody('card'))
    expect(plain.statement_descriptor).toBe('Test account')
    const three = await created(sourceBody('card'), { statement_descriptor: 'ABC' })
    expect(three.statement_descriptor).toBe('ABC')
    const hundred = "A-b_c.d,e'f#1 ".repeat(8).slice(0, 100)
    const h = await created(sourceBody('card'), { statement_descriptor: hundred })
    expect(h.statement_descriptor).toBe(hundred)
    await refused({ statement_descriptor: 'AB' }, 422, 'parameter_invalid', 'statement_descriptor')
    await refused({ statement_descriptor: 'A'.repeat(101) }, 422, 'parameter_invalid', 'statement_descriptor')
    for (const bad of ['Shop!', 'Shop<script>', 'Café', 'a/b', 'x@y.z', 'ACME\u2028\n', 'ACME\r\nX', 'ACME\u00a0X']) {
      await refused({ statement_descriptor: bad }, 422, 'parameter_invalid', 'statement_descriptor')
    }
  })

  it('an unknown field is 422 parameter_unknown', async () => {
    await refused({ amout: 1000 }, 422, 'parameter_unknown', 'amout')
    await refused({ captured: true }, 422, 'parameter_unknown', 'captured')
  })

  it('wrong types of capture, require_auth and metadata are 422', async () => {
    await refused({ capture: 'false' }, 422, 'parameter_invalid', 'capture')
    await refused({ require_auth: 0 }, 422, 'parameter_invalid', 'require_auth')
    await refused({ metadata: 'x' }, 422, 'parameter_invalid', 'metadata')
  })

  it('an unknown source is 404 with param source', async () => {
    expectError(
      await post({ amount: 1000, currency: 'usd', source: 'src_00000000000000000000000000000000' }),
      404,
      'resource_missing',
      'source',
    )
    expectError(await post({ amount: 1000, currency: 'usd', source: 'nope' }), 404, 'resource_missing', 'source')
  })

  it("another account's source and a live source are 404 with param source, and stay unused", async () => {
    const foreign = await newSource(cardSource(), other)
    expectError(await post({ amount: 1000, currency: 'usd', source: foreign.id }), 404, 'resource_missing', 'source')
    const live = await newSource(cardSource(), t.skLive)
    expectError(await post({ amount: 1000, currency: 'usd', source: live.id }), 404, 'resource_missing', 'source')
    expect((await other.get(`/v2/sources/${foreign.id}`)).body.used).toBe(false)
    expect((await t.skLive.get(`/v2/sources/${live.id}`)).body.used).toBe(false)
  })

  it('a used source is 400 source_used', async () => {
    const c = await created(sourceBody('card'))
    expectError(await post({ amount: 1000, currency: 'usd', source: c.source.id }), 400, 'source_used', 'source')
    const w = await created(sourceBody('wallet_c'))
    expectError(await post({ amount: 1000, currency: 'usd', source: w.source.id }), 400, 'source_used', 'source')
  })

  it('a source attached to a customer and then detached cannot be charged', async () => {
    const { src, cus } = await vaulted(sourceBody('card'))
    const det = await t.sk.delete(`/v2/customers/${cus.id}/sources/${src.id}`)
    expect(det.status).toBe(200)
    expectError(await post({ amount: 1000, currency: 'usd', source: src.id }), 400, 'source_used', 'source')
  })

  it('a vaulted source needs its own customer', async () => {
    const { src, cus } = await vaulted(sourceBody('card'))
    const stranger = await customer()
    expectError(await post({ amount: 1000, currency: 'usd', source: src.id }), 400, 'customer_source_mismatch')
    expectError(
      await post({ amount: 1000, currency: 'usd', source: src.id, customer: stranger.id }),
      400,
      'customer_source_mismatch',
    )
    expectError(
      await post({ amount: 1000, currency: 'usd', source: src.id, customer: 'cus_00000000000000000000000000000000' }),
      404,
      'resource_missing',
      'customer',
    )
    const list = await t.sk.get('/v2/charges/?limit=100')
    expect(list.body.data.some((c: Json) => c.source.id === src.id)).toBe(false)
    const okRes = await post({ amount: 1000, currency: 'usd', source: src.id, customer: cus.id })
    expect(okRes.status).toBe(201)
    expect(okRes.body.status).toBe('succeeded')
  })

  it('an unvaulted source with a customer is refused', async () => {
    const cus = await customer()
    await refused({ customer: cus.id }, 400, 'customer_source_mismatch')
  })

  it('a public key cannot create a charge; no key is 401', async () => {
    const id = await freshId()
    expectError(
      await t.pk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: id }),
      403,
      'secret_key_required',
    )
    expect((await t.anon.post('/v2/charges/', { amount: 1000, currency: 'usd', source: id })).status).toBe(401)
    expect((await t.sk.get(`/v2/sources/${id}`)).body.used).toBe(false)
  })

  it('a live key without a processor is 400 livemode_unavailable, and the live source stays unused', async () => {
    const live = await newSource(cardSource(), t.skLive)
    expect(live.livemode).toBe(true)
    const res = await t.skLive.post('/v2/charges/', { amount: 1000, currency: 'usd', source: live.id })
    expectError(res, 400, 'livemode_unavailable')
    expect((await t.skLive.get(`/v2/sources/${live.id}`)).body.used).toBe(false)
    const list = await t.skLive.get('/v2/charges/')
    expect(list.body.data).toEqual([])
  })
})

describe('refused transitions', () => {
  const capture = (id: string, body?: object) => t.sk.post(`/v2/charges/${id}/capture`, body)
  const voidIt = (id: string) => t.sk.post(`/v2/charges/${id}/void`)
  const refund = (id: string, body?: object) => t.sk.post(`/v2/charges/${id}/refund`, body)
  const verify = (id: string, confirmation_id: string, otp: string) =>
    t.sk.post(`/v2/charges/${id}/verify`, { confirmation_id, otp })

  it('capture twice', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    await ok(await capture(c.id))
    await refusedUnchanged(c.id, () => capture(c.id), 400, 'charge_not_capturable')
  })

  it('capture an immediately captured charge', async () => {
    const c = await created(sourceBody('card'))
    await refusedUnchanged(c.id, () => capture(c.id), 400, 'charge_not_capturable')
  })

  it('capture a voided charge', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    await ok(await voidIt(c.id))
    await refusedUnchanged(c.id, () => capture(c.id), 400, 'charge_not_capturable')
  })

  it('capture a failed charge', async () => {
    const c = await created(sourceBody('card', { number: '4000000000000002' }), { capture: false })
    expect(c.status).toBe('failed')
    await refusedUnchanged(c.id, () => capture(c.id), 400, 'charge_not_capturable')
  })

  it('capture a pending charge', async () => {
    const c = await created(sourceBody('wallet_a'), { capture: false })
    await refusedUnchanged(c.id, () => capture(c.id), 400, 'charge_not_capturable')
  })

  it('capture more than authorized is amount_too_large, and the charge can still be captured', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    await refusedUnchanged(c.id, () => capture(c.id, { amount: 1001 }), 400, 'amount_too_large')
    expect((await capture(c.id, { amount: 1001 })).body.error.param).toBe('amount')
    expectError(await capture(c.id, { amount: 0 }), 422, 'parameter_invalid', 'amount')
    await ok(await capture(c.id, { amount: 999 }))
  })

  it('refund an uncaptured charge', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    await refusedUnchanged(c.id, () => refund(c.id), 400, 'charge_not_refundable')
    await refusedUnchanged(c.id, () => refund(c.id, { amount: 10 }), 400, 'charge_not_refundable')
  })

  it('refund a pending, a failed and a voided charge', async () => {
    const p = await created(sourceBody('qr_a'))
    await refusedUnchanged(p.id, () => refund(p.id), 400, 'charge_not_refundable')
    const f = await created(sourceBody('card', { number: '4000000000009987' }))
    await refusedUnchanged(f.id, () => refund(f.id), 400, 'charge_not_refundable')
    const v = await created(sourceBody('card'), { capture: false })
    await ok(await voidIt(v.id))
    await refusedUnchanged(v.id, () => refund(v.id), 400, 'charge_not_refundable')
  })

  it('refund more than is left', async () => {
    const c = await created(sourceBody('card'))
    await refusedUnchanged(c.id, () => refund(c.id, { amount: 1001 }), 400, 'amount_too_large')
    await ok(await refund(c.id, { amount: 400 }))
    await refusedUnchanged(c.id, () => refund(c.id, { amount: 601 }), 400, 'amount_too_large')
    const rest = await ok(await refund(c.id, { amount: 600 }))
    expect(rest.status).toBe('refunded')
  })

  it('refund a fully refunded charge', async () => {
    const c = await created(sourceBody('card'))
    await ok(await refund(c.id))
    await refusedUnchanged(c.id, () => refund(c.id), 400, 'charge_not_refundable')
    await refusedUnchanged(c.id, () => refund(c.id, { amount: 1 }), 400, 'charge_not_refundable')
  })

  it('void a captured charge, a refunded one, a failed one and a pending one', async () => {
    const c = await created(sourceBody('card'))
    await refusedUnchanged(c.id, () => voidIt(c.id), 400, 'charge_not_voidable')
    const late = await created(sourceBody('card'), { capture: false })
    await ok(await capture(late.id))
    await refusedUnchanged(late.id, () => voidIt(late.id), 400, 'charge_not_voidable')
    await ok(await refund(late.id))
    await refusedUnchanged(late.id, () => voidIt(late.id), 400, 'charge_not_voidable')
    const f = await created(sourceBody('card', { number: '4000000000000119' }))
    await refusedUnchanged(f.id, () => voidIt(f.id), 400, 'charge_not_voidable')
    const p = await created(sourceBody('wallet_d'), { capture: false })
    await refusedUnchanged(p.id, () => voidIt(p.id), 400, 'charge_not_voidable')
  })

  it('void twice', async () => {
    const c = await created(sourceBody('card'), { capture: false })
    await ok(await voidIt(c.id))
    await refusedUnchanged(c.id, () => voidIt(c.id), 400, 'charge_not_voidable')
  })

  async function otpCharge(): Promise<{ id: string; conf: string }> {
    const { src, cus } = await vaulted(sourceBody('transfer_a'))
    const c1 = await t.sk.post('/v2/charges/', { amount: 100, currency: 'php', source: src.id, customer: cus.id })
    await ok(await decide(c1.body.id, 'approve'))
    const c2 = await t.sk.post('/v2/charges/', { amount: 900, currency: 'php', source: src.id, customer: cus.id })
    expect(c2.body.source.action.type).toBe('verify_otp')
    return { id: c2.body.id, conf: c2.body.source.action.confirmation_id }
  }

  it('verify with a wrong OTP is otp_invalid; a right one after two wrong still succeeds', async () => {
    const { id, conf } = await otpCharge()
    for (let i = 0; i < 2; i++) {
      const before = await getCharge(id)
      expectError(await verify(id, conf, '999999'), 400, 'otp_invalid', 'otp')
      const after = await getCharge(id)
      expect(after.status).toBe('pending')
      expect(after.source.action).toEqual(before.source.action)
    }
    const done = await ok(await verify(id, conf, '123456'))
    expect(done.status).toBe('succeeded')
  })

  it('three wrong OTPs fail the charge; then verify is charge_not_pending', async () => {
    const { id, conf } = await otpCharge()
    expectError(await verify(id, conf, '1'), 400, 'otp_invalid', 'otp')
    expectError(await verify(id, conf, '12345'), 400, 'otp_invalid', 'otp')
    const third = await verify(id, conf, '654321')
    expect(third.status).toBe(200)
    const failed = await ok(third)
    expect(failed).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(failed.failure_data.code).toBe('otp_attempts_exceeded')
    expect(failed.source.action).toBeUndefined()
    await refusedUnchanged(id, () => verify(id, conf, '123456'), 400, 'charge_not_pending')
  })

  it('verify with a wrong confirmation_id is refused and does not use up attempts', async () => {
    const { id, conf } = await otpCharge()
    for (let i = 0; i < 4; i++) {
      await refusedUnchanged(id, () => verify(id, 'conf_wrong_one', '123456'), 400, 'confirmation_id_invalid')
    }
    expect((await verify(id, 'conf_wrong_one', '123456')).body.error.param).toBe('confirmation_id')
    expect((await ok(await verify(id, conf, '123456'))).status).toBe('succeeded')
  })

  it('verify validation: short confirmation_id and long otp are 422', async () => {
    const { id, conf } = await otpCharge()
    expectError(await verify(id, 'abc', '123456'), 422, 'parameter_invalid', 'confirmation_id')
    expectError(await verify(id, conf, '12345678901'), 422, 'parameter_invalid', 'otp')
    expectError(await t.sk.post(`/v2/charges/${id}/verify`, { otp: '123456' }), 422, 'parameter_missing')
    expect((await getCharge(id)).status).toBe('pending')
  })

  it('verify on a charge that waits at a hosted page is charge_not_verifiable', async () => {
    const c = await created(sourceBody('wallet_e'))
    await refusedUnchanged(c.id, () => verify(c.id, 'conf_whatever', '123456'), 400, 'charge_not_verifiable')
    const tds = await created(sourceBody('card', { number: '4000000000003220' }))
    await refusedUnchanged(tds.id, () => verify(tds.id, 'conf_whatever', '123456'), 400, 'charge_not_verifiable')
  })

  it('verify on a succeeded card charge is charge_not_pending', async () => {
    const c = await created(sourceBody('card'))
    await refusedUnchanged(c.id, () => verify(c.id, 'conf_whatever', '123456'), 400, 'charge_not_pending')
  })

  it('test authorize on a succeeded, a failed and a decided charge is charge_not_pending', async () => {
    const c = await created(sourceBody('card'))
    await refusedUnchanged(c.id, () => decide(c.id, 'approve'), 400, 'charge_not_pending')
    const f = await created(sourceBody('card', { number: '4000000000009979' }))
    await refusedUnchanged(f.id, () => decide(f.id, 'approve'), 400, 'charge_not_pending')
    const w = await created(sourceBody('wallet_a'))
    await ok(await decide(w.id, 'decline'))
    await refusedUnchanged(w.id, () => decide(w.id, 'approve'), 400, 'charge_not_pending')
    await refusedUnchanged(w.id, () => decide(w.id, 'decline'), 400, 'charge_not_pending')
  })

  it('test authorize on an OTP charge is charge_not_pending; a bad decision is 422', async () => {
    const { id } = await otpCharge()
    await refusedUnchanged(id, () => decide(id, 'approve'), 400, 'charge_not_pending')
    const w = await created(sourceBody('wallet_a'))
    expectError(await t.sk.post(`/v2/test/charges/${w.id}/authorize`, { decision: 'maybe' }), 422, 'parameter_invalid')
    expectError(await t.sk.post(`/v2/test/charges/${w.id}/authorize`, {}), 422, 'parameter_missing')
    expect((await getCharge(w.id)).status).toBe('pending')
  })

  it('a hosted page answer on a charge no longer pending is a 400 page, and changes nothing', async () => {
    const c = await created(sourceBody('wallet_b'))
    const url = new URL(c.source.action.url)
    const token = url.searchParams.get('token') as string
    const done = await ok(await decide(c.id, 'approve'))
    const form = new URLSearchParams({ token, decision: 'decline' }).toString()
    const res = await t.anon.post(url.pathname, form, { 'content-type': 'application/x-www-form-urlencoded' })
    expect(res.status).toBe(400)
    expect(String(res.headers['content-type'])).toMatch(/^text\/html/)
    expect(res.text).toContain('charge_not_pending')
    expect(res.headers.location).toBeUndefined()
    expect(await getCharge(c.id)).toEqual(done)
  })

  it('test authorize with a live key is test_mode_only', async () => {
    const w = await created(sourceBody('wallet_a'))
    expectError(await decide(w.id, 'approve', t.skLive), 400, 'test_mode_only')
    expect((await getCharge(w.id)).status).toBe('pending')
  })
})

describe('charges that are not there', () => {
  const UNKNOWN = 'ch_00000000000000000000000000000000'
  const operations: [string, (as: Client, id: string) => Promise<Reply>][] = [
    ['retrieve', (as, id) => as.get(`/v2/charges/${id}`)],
    ['capture', (as, id) => as.post(`/v2/charges/${id}/capture`)],
    ['void', (as, id) => as.post(`/v2/charges/${id}/void`)],
    ['refund', (as, id) => as.post(`/v2/charges/${id}/refund`)],
    ['verify', (as, id) => as.post(`/v2/charges/${id}/verify`, { confirmation_id: 'conf_xxxxx', otp: '123456' })],
    ['test authorize', (as, id) => as.post(`/v2/test/charges/${id}/authorize`, { decision: 'approve' })],
  ]

  it.each(operations)('%s of an unknown charge id is 404', async (_name, op) => {
    expectError(await op(t.sk, UNKNOWN), 404, 'resource_missing')
    expectError(await op(t.sk, 'ch_nope'), 404, 'resource_missing')
  })

  it.each(operations)("%s of another account's charge is 404 and changes nothing", async (_name, op) => {
    const held = await created(sourceBody('card'), { capture: false })
    const pending = await created(sourceBody('wallet_a'))
    for (const c of [held, pending]) {
      const res = await op(other, c.id)
      expectError(res, 404, 'resource_missing')
      expect(res.text).not.toContain('Test account')
      expect(await getCharge(c.id)).toEqual(c)
    }
  })

  it.each(operations.filter(([name]) => name !== 'test authorize'))(
    "%s of the other mode's charge is 404 and changes nothing",
    async (_name, op) => {
      const held = await created(sourceBody('card'), { capture: false })
      expectError(await op(t.skLive, held.id), 404, 'resource_missing')
      expect(await getCharge(held.id)).toEqual(held)
    },
  )

  it("lists show neither another account's nor the other mode's charges", async () => {
    const mine = await created(sourceBody('card'))
    const theirs = await other.get('/v2/charges/?limit=100')
    expect(theirs.status).toBe(200)
    expect(theirs.body.data.map((c: Json) => c.id)).not.toContain(mine.id)
    const live = await t.skLive.get('/v2/charges/?limit=100')
    expect(live.body.data.map((c: Json) => c.id)).not.toContain(mine.id)
  })
})
