import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Json, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { chargeSteps, expectConsistent, sourceBody } from './charge-harness.js'

/**
 * Create a charge on a card source: one per documented test card outcome, 3-D Secure and its
 * decisions, vaulted cards, and the metadata a charge keeps.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { created, ok, decide, vaulted } = chargeSteps(() => t)

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

  it('require_auth false on 4000000000003246 skips 3-D Secure and is declined at once', async () => {
    const c = await created(sourceBody('card', { number: '4000000000003246' }), { require_auth: false })
    expect(c).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(c.failure_data.code).toBe('card_declined')
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

describe('the source a charge embeds', () => {
  const owner = {
    name: 'Ann Lee',
    address_country: 'PH',
    billing: { name: 'Ann Lee', line1: '12 Rizal St', city: 'Manila', email: 'ann@example.com' },
  }

  it("a 3-D Secure card's: its owner, the charge's require_auth and the payer's action, created, retrieved and listed", async () => {
    const c = await created({ ...sourceBody('card', { number: '4000000000003220' }), redirect: REDIRECT, owner })
    expect(c.status).toBe('pending')
    expect(c.source).toMatchObject({ owner, require_auth: true, redirect: REDIRECT })
    expect(c.source.action).toEqual({
      type: 'redirect_to_url',
      url: expect.stringContaining(`/v2/hosted/charges/${c.id}?token=`),
    })
    // created() has compared the retrieved charge with the created one
    const listed = (await t.sk.get('/v2/charges/?limit=5')).body.data.find((x: Json) => x.id === c.id)
    expect(listed.source).toEqual(c.source)
  })
})
