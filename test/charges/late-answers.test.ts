import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIRECT, type TestApp, testApp } from '../helpers/app.js'

/**
 * A payer's answer slow at the processor outlasts the recovery sweep's grace, and the sweep lets
 * it go, so that the charge can be answered again. When the charge is decided otherwise
 * meanwhile (another answer, its payer's time running out), the late answer changes nothing: a
 * failed charge stays failed, with its one event.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp({}, { recovery: { intervalMs: 100, graceMs: 200, payerTimeoutMs: 60_000 } })
})
afterAll(() => t.close())

const slow = { 'jackdaw-test-fault': 'processor_latency=1500' }
const eventsOf = async (id: string) =>
  (await t.sk.get(`/v2/events/?charge=${id}`)).body.data.map((e: { type: string }) => e.type)

async function pendingCharge(type: string) {
  const src = await t.sk.post('/v2/sources/', { type, redirect: REDIRECT })
  const charge = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
  expect(charge.body.status, charge.text).toBe('pending')
  return charge.body.id as string
}

describe("a payer's answer the sweep let go, once the charge was decided otherwise", () => {
  it('another answer declined it: the late approval answers the failed charge, and records nothing', async () => {
    const id = await pendingCharge('wallet_a')
    const late = t.sk.post(`/v2/test/charges/${id}/authorize`, { decision: 'approve' }, slow)
    await sleep(600)
    const declined = await t.sk.post(`/v2/test/charges/${id}/authorize`, { decision: 'decline' })
    expect(declined.body).toMatchObject({ status: 'failed', failure_data: { code: 'payment_declined' } })

    const answered = await late
    expect(answered.status, answered.text).toBe(200)
    expect(answered.body).toMatchObject({ status: 'failed', authorized: false })
    expect((await t.sk.get(`/v2/charges/${id}`)).body).toMatchObject({ status: 'failed', authorized: false })
    expect(await eventsOf(id)).toEqual(['charge.failed', 'charge.pending'])
  })

  it("its payer's time ran out: the late approval does not bring the expired charge back", async () => {
    const id = await pendingCharge('qr_a')
    const late = t.sk.post(`/v2/test/charges/${id}/authorize`, { decision: 'approve' }, slow)
    await sleep(600)
    expect((await t.sk.post('/v2/test/clock/advance', { seconds: 120 })).status).toBe(200)
    let expired: { status?: string } = {}
    for (let i = 0; i < 50 && expired.status !== 'failed'; i++) {
      await sleep(50)
      expired = (await t.sk.get(`/v2/charges/${id}`)).body
    }
    expect(expired).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })

    await late
    expect((await t.sk.get(`/v2/charges/${id}`)).body).toMatchObject({
      status: 'failed',
      authorized: false,
      failure_data: { code: 'payment_expired' },
    })
    expect(await eventsOf(id)).toEqual(['charge.failed', 'charge.pending'])
  })
})
