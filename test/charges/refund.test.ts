import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Json, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { chargeSteps, expectRefundShape, sourceBody } from './charge-harness.js'

/**
 * Refund a captured charge: the default reason, several partial refunds up to the whole amount,
 * the refund's validation, and every refund a charge's status or remaining amount refuses.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { created, ok, getCharge, refusedUnchanged } = chargeSteps(() => t)

describe('capture, void and refund', () => {
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

describe('refused transitions', () => {
  const voidIt = (id: string) => t.sk.post(`/v2/charges/${id}/void`)
  const refund = (id: string, body?: object) => t.sk.post(`/v2/charges/${id}/refund`, body)

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
})
