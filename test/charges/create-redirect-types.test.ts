import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, type Json, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { SPEC_REDIRECT_TYPES } from '../helpers/spec.js'
import { chargeSteps, expectConsistent, sourceBody } from './charge-harness.js'

/**
 * Create a charge on each source type that pays through a hosted page: pending, then approved or
 * declined by the payer, captured later, refunded; transfer_a linked and charged again by OTP.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { created, ok, decide, vaulted } = chargeSteps(() => t)

const NON_CARD_TYPES = SPEC_REDIRECT_TYPES

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

  it('transfer_a: charges made before the first link keep the account it linked', async () => {
    const { src, cus } = await vaulted(sourceBody('transfer_a'))
    const make = async () =>
      (await t.sk.post('/v2/charges/', { amount: 300, currency: 'php', source: src.id, customer: cus.id })).body
    const [first, second] = [await make(), await make()]
    expect(second.source.action.type).toBe('redirect_to_url')
    const linked = (await ok(await decide(first.id, 'approve'))).source.bank_account
    const later = await ok(await decide(second.id, 'approve'))
    expect(later.status).toBe('succeeded')
    expect(later.source.bank_account).toEqual(linked)
    expect((await t.sk.get(`/v2/charges/${first.id}`)).body.source.bank_account).toEqual(linked)
    expect((await t.sk.get(`/v2/sources/${src.id}`)).body.bank_account).toEqual(linked)
  })

  it("transfer_a: a link lasts a year by the account's clock; after it the payer links again", async () => {
    const shop = client(t.app, (await t.app.services.accounts.create('Bank shop')).sk_test_key)
    const steps = chargeSteps(() => ({ ...t, sk: shop }))
    const { src, cus } = await steps.vaulted(sourceBody('transfer_a'))
    const charge = async () =>
      (await shop.post('/v2/charges/', { amount: 300, currency: 'php', source: src.id, customer: cus.id })).body
    const first = await charge()
    const linked = (await steps.ok(await steps.decide(first.id, 'approve'))).source.bank_account
    const clock = (await shop.get('/v2/test/clock')).body.now as string
    expect(linked.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    expect(linked.expires_at.slice(0, 4)).toBe(String(Number(clock.slice(0, 4)) + 1))
    expect(linked.expires_at > first.created_at).toBe(true)

    expect((await charge()).source.action.type).toBe('verify_otp')
    await shop.post('/v2/test/clock/advance', { seconds: 31_536_000 })
    await shop.post('/v2/test/clock/advance', { seconds: 2 * 86_400 })
    const expired = await charge()
    expect(expired.source.action.type).toBe('redirect_to_url')
    const relinked = (await steps.ok(await steps.decide(expired.id, 'approve'))).source.bank_account
    expect(relinked.reference_id).not.toBe(linked.reference_id)
    expect(relinked.expires_at > linked.expires_at).toBe(true)
    expect((await charge()).source.action.type).toBe('verify_otp')
  })

  it('transfer_a without a customer is linked by its one charge and cannot be charged again', async () => {
    const c = await created(sourceBody('transfer_a'))
    const done = await ok(await decide(c.id, 'approve'))
    expect(done.source.bank_account).toBeDefined()
    const again = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: c.source.id })
    expectError(again, 400, 'source_used', 'source')
  })
})

describe('the source a charge embeds', () => {
  it("a wallet's: its owner and the charge's require_auth, created, retrieved, listed and once approved", async () => {
    const owner = {
      name: 'Ann Lee',
      address_country: 'PH',
      shipping: { name: 'Ann Lee', city: 'Cebu', zip_code: '6000' },
    }
    const c = await created({ ...sourceBody('wallet_b'), owner }, { require_auth: false })
    // require_auth only skips a card's 3-D Secure: the wallet still waits for its payer
    expect(c.status).toBe('pending')
    expect(c.source).toMatchObject({ owner, require_auth: false })
    expect(c.source.action.type).toBe('redirect_to_url')
    const listed = (await t.sk.get('/v2/charges/?limit=5')).body.data.find((x: Json) => x.id === c.id)
    expect(listed.source).toEqual(c.source)
    const done = await ok(await decide(c.id, 'approve'))
    expect(done.source).toMatchObject({ owner, require_auth: false })
  })
})
