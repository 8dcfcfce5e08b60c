import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { chargeSteps, sourceBody } from './charge-harness.js'

/**
 * Capture a charge held with capture false, in full or in part, and void it; and every capture
 * or void a charge's status refuses, which leaves the charge as it was.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { created, ok, decide, refusedUnchanged } = chargeSteps(() => t)

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
})

describe('refused transitions', () => {
  const capture = (id: string, body?: object) => t.sk.post(`/v2/charges/${id}/capture`, body)
  const voidIt = (id: string) => t.sk.post(`/v2/charges/${id}/void`)
  const refund = (id: string, body?: object) => t.sk.post(`/v2/charges/${id}/refund`, body)

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
})
