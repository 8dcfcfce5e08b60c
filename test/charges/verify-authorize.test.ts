import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { chargeSteps, sourceBody } from './charge-harness.js'

/**
 * Answer a pending charge: verify its OTP, decide it in test mode or on its hosted page; and every
 * answer the charge refuses, which leaves it as it was.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { created, ok, decide, getCharge, refusedUnchanged, otpCharge } = chargeSteps(() => t)

describe('refused transitions', () => {
  const verify = (id: string, confirmation_id: string, otp: string) =>
    t.sk.post(`/v2/charges/${id}/verify`, { confirmation_id, otp })

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

  it('a hosted page answer on a charge no longer pending changes nothing, and sends the payer where it ended', async () => {
    const c = await created(sourceBody('wallet_b'))
    const url = new URL(c.source.action.url)
    const token = url.searchParams.get('token') as string
    const done = await ok(await decide(c.id, 'approve'))
    const form = new URLSearchParams({ token, decision: 'decline' }).toString()
    const res = await t.anon.post(url.pathname, form, { 'content-type': 'application/x-www-form-urlencoded' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(done.source.redirect.success)
    expect(await getCharge(c.id)).toEqual(done)
  })

  it('test authorize with a live key is test_mode_only', async () => {
    const w = await created(sourceBody('wallet_a'))
    expectError(await decide(w.id, 'approve', t.skLive), 400, 'test_mode_only')
    expect((await getCharge(w.id)).status).toBe('pending')
  })
})

describe('an answer after the payer timeout', () => {
  it('is refused, even before the recovery sweep has failed the charge', async () => {
    // a second's payer timeout, swept once a minute: the answer comes between the two
    const app = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: 1_000 } })
    try {
      const src = await app.sk.post('/v2/sources/', {
        ...cardSource({ number: '4000000000003220' }),
        redirect: REDIRECT,
      })
      const charge = (await app.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })).body
      expect(charge.status).toBe('pending')
      await new Promise((resolve) => setTimeout(resolve, 1_300))
      const late = await app.sk.post(`/v2/test/charges/${charge.id}/authorize`, { decision: 'approve' })
      expectError(late, 400, 'charge_not_pending')
      expect((await app.sk.get(`/v2/charges/${charge.id}`)).body.status).toBe('pending')
      expect(await app.app.services.charges.expireAbandoned(1_000)).toBe(1)
      const expired = (await app.sk.get(`/v2/charges/${charge.id}`)).body
      expect(expired).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
    } finally {
      await app.close()
    }
  })

  it("runs from the charge's last change: a wrong OTP neither moves updated_at nor restarts the time", async () => {
    const app = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: 1_500 } })
    try {
      const { id, conf } = await chargeSteps(() => app).otpCharge()
      const before = (await app.sk.get(`/v2/charges/${id}`)).body
      const events = async () => (await app.sk.get(`/v2/events/?charge=${id}`)).body.data.length
      const told = await events()
      await new Promise((resolve) => setTimeout(resolve, 800))
      const wrong = await app.sk.post(`/v2/charges/${id}/verify`, { confirmation_id: conf, otp: '999999' })
      expectError(wrong, 400, 'otp_invalid', 'otp')
      const after = (await app.sk.get(`/v2/charges/${id}`)).body
      expect(after.updated_at).toBe(before.updated_at)
      expect(await events()).toBe(told)
      // past the timeout since the charge's last change, though not since the wrong OTP
      await new Promise((resolve) => setTimeout(resolve, 900))
      expect(await app.app.services.charges.expireAbandoned(1_500)).toBe(1)
      const expired = (await app.sk.get(`/v2/charges/${id}`)).body
      expect(expired).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
    } finally {
      await app.close()
    }
  })

  it('is taken while the time lasts', async () => {
    const app = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: 60_000 } })
    try {
      const src = await app.sk.post('/v2/sources/', {
        ...cardSource({ number: '4000000000003220' }),
        redirect: REDIRECT,
      })
      const charge = (await app.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })).body
      const answered = await app.sk.post(`/v2/test/charges/${charge.id}/authorize`, { decision: 'approve' })
      expect(answered.body.status).toBe('succeeded')
    } finally {
      await app.close()
    }
  })
})
