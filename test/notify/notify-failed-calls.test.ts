import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { redeliver } from '../../src/notify/deliveries.js'
import { Simulator } from '../../src/processor/simulator.js'
import { NotifyAllowList } from '../../src/services/notify-address.js'
import { claimDue, INTERRUPTED } from '../../src/store/deliveries.js'
import { chargeNotifying, deliveryOf, micros, settled, sleep } from './notify-harness.js'
import { expectSpacing, receiver, service, useNotifyServices } from './notify-services.js'

/**
 * Notify calls that fail: timed out on the schedule and redelivered, redelivered from the command
 * line, interrupted by a worker that died, and refused in live mode at an address now private.
 */

useNotifyServices()

describe('notify calls', () => {
  it('a receiver that never answers: attempts time out on the schedule, then failed; redelivery succeeds', async () => {
    const schedule = [0.4, 0.8]
    const s = await service({ schedule, timeoutMs: 300, pollMs: 50 })
    let answering = false
    const r = await receiver(() => (answering ? 200 : 'hang'))
    const { event } = await chargeNotifying(s.sk, r.url)
    const d = await deliveryOf(s.sk, event.id)
    const failed = await settled(s.sk, d.id, 'failed')
    expect(failed.attempts).toHaveLength(3)
    for (const a of failed.attempts) {
      expect(a.status_code).toBeNull()
      expect(a.error).toMatch(/timeout/)
      expect(a.succeeded).toBe(false)
      expect(a.duration_ms).toBeGreaterThanOrEqual(290)
    }
    expectSpacing(failed.attempts, schedule)
    expect(failed).toMatchObject({ status: 'failed', next_attempt_at: null, delivered_at: null, attempt_count: 3 })
    // on a loaded machine a call can time out before the receiver has read it, so the receiver
    // may have seen fewer calls than were made; it never sees more, and none after the failure
    const seen = r.calls.length
    expect(seen).toBeGreaterThan(0)
    expect(seen).toBeLessThanOrEqual(3)
    await sleep(1000)
    expect(r.calls).toHaveLength(seen)
    expect((await s.sk.get(`/v2/deliveries/${d.id}`)).body.attempts).toHaveLength(3)

    answering = true
    const again = await s.sk.post(`/v2/deliveries/${d.id}/redeliver`)
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ id: d.id, status: 'pending' })
    const done = await settled(s.sk, d.id, 'delivered')
    expect(done.attempts.map((a: { status_code: number | null }) => a.status_code)).toEqual([null, null, null, 200])
    expect(r.calls).toHaveLength(seen + 1)

    const notFailed = await s.sk.post(`/v2/deliveries/${d.id}/redeliver`)
    expect(notFailed.status).toBe(400)
    expect(notFailed.body.error.code).toBe('delivery_not_failed')
  })

  it('redeliver(db, id), for the command line: one more attempt, failed again if it fails', async () => {
    const s = await service({ schedule: [], timeoutMs: 2000, pollMs: 50 })
    let status = 500
    const r = await receiver(() => status)
    const { event } = await chargeNotifying(s.sk, r.url)
    const d = await deliveryOf(s.sk, event.id)
    await settled(s.sk, d.id, 'failed')
    expect(r.calls).toHaveLength(1)

    const queued = await redeliver(s.db, d.id)
    expect(queued).toMatchObject({ id: d.id, status: 'pending' })
    const again = await settled(s.sk, d.id, 'failed')
    expect(again.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500])
    expect(r.calls).toHaveLength(2)

    status = 204
    await redeliver(s.db, d.id)
    const done = await settled(s.sk, d.id, 'delivered')
    expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 204])

    await expect(redeliver(s.db, d.id)).rejects.toMatchObject({ code: 'delivery_not_failed' })
    await expect(redeliver(s.db, 'dlv_0000000000000000000000000000dead')).rejects.toBeInstanceOf(AppError)
  })

  it('an attempt whose worker died is recorded as interrupted and made again after its lease', async () => {
    const queuer = await service()
    const r = await receiver(() => 200)
    const { event } = await chargeNotifying(queuer.sk, r.url)
    const d = await deliveryOf(queuer.sk, event.id)
    // a worker claims the call and dies before sending it
    const leaseMs = 1500
    const claimed = await claimDue(queuer.db, { limit: 10, leaseMs, token: 'dead-worker' })
    expect(claimed.map((c) => c.id)).toContain(d.id)
    await queuer.close()

    const s = await service({ schedule: [0.2], timeoutMs: 2000, pollMs: 50 })
    const done = await settled(s.sk, d.id, 'delivered')
    expect(done.attempts).toHaveLength(2)
    // not taken up again while the dead worker's lease lasted
    expect(micros(done.attempts[1].started_at) - micros(done.attempts[0].started_at)).toBeGreaterThanOrEqual(
      leaseMs * 1000,
    )
    expect(done.attempts[0]).toMatchObject({ number: 1, status_code: null, error: INTERRUPTED, succeeded: false })
    expect(done.attempts[1]).toMatchObject({ number: 2, status_code: 200, succeeded: true })
    expect(r.calls).toHaveLength(1)
  })

  it('live mode: an address that now resolves to a private range fails the attempt without a call', async () => {
    // no local receiver allowed: the operator's allow list holds in live mode too
    const options = { liveProcessor: new Simulator(), notifyAllow: NotifyAllowList.none }
    const queuer = await service(undefined, options)
    const r = await receiver(() => 200)
    const refused = await queuer.skLive.post('/v2/sources/', {
      type: 'card',
      card: { name: 'Ann Lee', number: '4242424242424242', exp_month: '12', exp_year: '2040', cvc: '123' },
      redirect: { success: 'https://shop.example/ok', fail: 'https://shop.example/fail', notify: r.url },
    })
    expect(refused.status).toBe(422)
    expect(refused.body.error.param).toBe('redirect.notify')

    // accepted at creation: a public address
    const { event } = await chargeNotifying(queuer.skLive, 'http://[2606:4700::1111]/hooks')
    expect(event.livemode).toBe(true)
    const d = await deliveryOf(queuer.skLive, event.id)
    expect(d.status).toBe('pending')
    // what the worker sees once the name resolves elsewhere: a loopback address
    await queuer.db.query('UPDATE deliveries SET url = $1 WHERE id = $2', [r.url, d.id])
    await queuer.close()

    const s = await service({ schedule: [], timeoutMs: 2000, pollMs: 50 }, options)
    const failed = await settled(s.skLive, d.id, 'failed')
    expect(failed.attempts).toHaveLength(1)
    expect(failed.attempts[0]).toMatchObject({ status_code: null, succeeded: false })
    expect(failed.attempts[0].error).toBe('address_refused')
    expect(r.calls).toHaveLength(0)
  })
})
