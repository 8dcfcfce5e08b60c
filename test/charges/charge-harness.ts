import { expect } from 'vitest'
import { Charge, Refund } from '../../src/schemas/charge.js'
import { type Client, cardSource, type Json, REDIRECT, type Reply, type TestApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { shapeProblems } from '../helpers/shape.js'
import { SPEC_SOURCE_TYPES } from '../helpers/spec.js'

/**
 * What the charge tests share: the checks every charge answer must pass, and the steps that make
 * sources, customers and charges through HTTP.
 */

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/

/** A refund shaped as its schema says, and the values the interface gives its fields. */
export function expectRefundShape(r: Json, currency: string) {
  expect(shapeProblems(Refund, r)).toEqual([])
  expect(r.id).toMatch(/^re_[0-9a-f]{32}$/)
  expect(r.amount).toBeGreaterThan(0)
  expect(r.currency).toBe(currency)
  expect(r.reason.length).toBeGreaterThan(0)
  expect(r.created_at).toMatch(ISO)
  if (r.updated_at !== undefined) expect(r.updated_at).toMatch(ISO)
}

/** A charge shaped as its schema says, no internal column leaking out, and the values of its fields. */
export function expectChargeShape(c: Json) {
  expect(shapeProblems(Charge, c)).toEqual([])
  expect(c.id).toMatch(/^ch_[0-9a-f]{32}$/)
  expect(c.currency).toMatch(/^[a-z]{3}$/)
  for (const r of c.refunds) expectRefundShape(r, c.currency)
  expect(c.created_at).toMatch(ISO)
  expect(c.updated_at).toMatch(ISO)
  expect(c.updated_at >= c.created_at).toBe(true)

  const s = c.source
  expect(s.id).toMatch(/^src_[0-9a-f]{32}$/)
  expect(SPEC_SOURCE_TYPES).toContain(s.type)
  expect(s.livemode).toBe(c.livemode)
  expect(s.created_at).toMatch(ISO)
  expect(s.updated_at).toMatch(ISO)
  if (s.card !== undefined) {
    expect(s.card).not.toHaveProperty('number')
    expect(s.card).not.toHaveProperty('cvc')
    expect(s.card.last4).toMatch(/^\d{4}$/)
  }
}

/** The flags, amounts and fields that each status implies. */
export function expectConsistent(c: Json) {
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

/** The body that creates a source of `type`: a card with `card` changed, or a redirect type. */
export function sourceBody(type: string, card: Record<string, unknown> = {}) {
  return type === 'card' ? cardSource(card) : { type, redirect: REDIRECT }
}

/**
 * The steps of the charge tests, on the app `app()` gives when they run (a file's app is made in
 * its beforeAll): each answer is checked as it comes.
 */
export function chargeSteps(app: () => TestApp) {
  async function newSource(body: object, as: Client = app().sk): Promise<Json> {
    const res = await as.post('/v2/sources/', body)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body
  }

  async function create(body: object, extra: object = {}, as: Client = app().sk): Promise<Reply> {
    const src = await newSource(body, as)
    return as.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.id, ...extra })
  }

  /** A created charge: answered 201, well formed and consistent, and stored as answered. */
  async function created(body: object, extra: object = {}): Promise<Json> {
    const res = await create(body, extra)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expectConsistent(res.body)
    const stored = await app().sk.get(`/v2/charges/${res.body.id}`)
    expect(stored.status).toBe(200)
    expect(stored.body).toEqual(res.body)
    return res.body
  }

  /** A charge answered 200, well formed and consistent, and stored as answered. */
  async function ok(res: Reply): Promise<Json> {
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expectConsistent(res.body)
    const stored = await app().sk.get(`/v2/charges/${res.body.id}`)
    expect(stored.body).toEqual(res.body)
    return res.body
  }

  /** The test-mode decision on a charge that waits for its payer. */
  const decide = (id: string, decision: 'approve' | 'decline', as: Client = app().sk) =>
    as.post(`/v2/test/charges/${id}/authorize`, { decision })

  async function getCharge(id: string): Promise<Json> {
    const res = await app().sk.get(`/v2/charges/${id}`)
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
    const res = await app().sk.post('/v2/customers/', { email: 'payer@example.com', description: 'payer' })
    expect(res.status).toBe(201)
    return res.body
  }

  /** A source attached to a new customer, so vaulted. */
  async function vaulted(body: object): Promise<{ src: Json; cus: Json }> {
    const src = await newSource(body)
    const cus = await customer()
    const att = await app().sk.post(`/v2/customers/${cus.id}/sources`, { source: src.id })
    expect(att.status, JSON.stringify(att.body)).toBe(200)
    return { src, cus }
  }

  /** A charge waiting for its OTP: the second charge of a linked transfer_a source. */
  async function otpCharge(): Promise<{ id: string; conf: string }> {
    const t = app()
    const { src, cus } = await vaulted(sourceBody('transfer_a'))
    const c1 = await t.sk.post('/v2/charges/', { amount: 100, currency: 'php', source: src.id, customer: cus.id })
    await ok(await decide(c1.body.id, 'approve'))
    const c2 = await t.sk.post('/v2/charges/', { amount: 900, currency: 'php', source: src.id, customer: cus.id })
    expect(c2.body.source.action.type).toBe('verify_otp')
    return { id: c2.body.id, conf: c2.body.source.action.confirmation_id }
  }

  return { newSource, create, created, ok, decide, getCharge, refusedUnchanged, customer, vaulted, otpCharge }
}
