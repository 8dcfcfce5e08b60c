import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_CLOCK_ADVANCE_SECONDS, MAX_CLOCK_OFFSET_SECONDS } from '../../src/domain/time.js'
import { type TestApp, testApp } from '../helpers/app.js'

/**
 * charge.payment_expired moves the account's test clock past the payer timeout: with the clock
 * too near its hundred-year limit to move that far, the run is refused before anything is made.
 * The account's clock ends at its limit here, so the file has an app of its own.
 */

const PAYER_TIMEOUT_MS = 3_600_000
const MOVE = PAYER_TIMEOUT_MS / 1000 + 1

let t: TestApp
beforeAll(async () => {
  t = await testApp({ payerTimeoutMs: PAYER_TIMEOUT_MS })
})
afterAll(() => t.close())

const offset = async () => (await t.sk.get('/v2/test/clock')).body.offset_seconds as number
const counts = async () => ({
  charges: (await t.sk.get('/v2/charges/?limit=100')).body.data.length,
  events: (await t.sk.get('/v2/events/?limit=100')).body.data.length,
})

/** Advances the clock until `room` seconds are left before its limit. */
async function leaveRoom(room: number) {
  for (let left = MAX_CLOCK_OFFSET_SECONDS - (await offset()) - room; left > 0; ) {
    const seconds = Math.min(left, MAX_CLOCK_ADVANCE_SECONDS)
    expect((await t.sk.post('/v2/test/clock/advance', { seconds })).status).toBe(200)
    left -= seconds
  }
  expect(MAX_CLOCK_OFFSET_SECONDS - (await offset())).toBe(room)
}

describe('charge.payment_expired near the test clock limit', () => {
  it('runs with just the room it needs, then is refused before anything is made, naming no field', async () => {
    await leaveRoom(MOVE)
    const last = await t.sk.post('/v2/test/scenarios/charge.payment_expired', {})
    expect(last.status, last.text).toBe(200)
    expect(last.body.objects.charge).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
    expect(await offset()).toBe(MAX_CLOCK_OFFSET_SECONDS)

    const before = await counts()
    const res = await t.sk.post('/v2/test/scenarios/charge.payment_expired', {})
    expect(res.status, res.text).toBe(400)
    expect(res.body.error.code).toBe('request_invalid')
    expect(res.body.error.param).toBeUndefined()
    expect(res.body.error.message).toMatch(/test clock/)
    expect(await counts()).toEqual(before)
    expect(await offset()).toBe(MAX_CLOCK_OFFSET_SECONDS)
  })

  it('other scenarios, which do not move the clock, run at its limit', async () => {
    await leaveRoom(0)
    const res = await t.sk.post('/v2/test/scenarios/charge.succeeded', {})
    expect(res.status, res.text).toBe(200)
  })
})
