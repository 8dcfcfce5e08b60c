import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { sign, verifySignature } from '../../src/notify/signature.js'
import { Simulator } from '../../src/processor/simulator.js'
import type { Json } from '../helpers/app.js'
import { chargeNotifying, deliveryOf, micros, settled, sleep, waitFor } from './notify-harness.js'
import { cleanup, expectSpacing, receiver, service, useNotifyServices } from './notify-services.js'

/**
 * Notify calls delivered: retried on the schedule, signed with the account's webhook secret (a
 * rolled one after the roll), and kept across a restart. Calls that fail are in
 * notify-failed-calls.test.ts; addresses, accounts' shares and the schedule in notify-network.test.ts.
 */

useNotifyServices()

describe('notify calls', () => {
  it('retries 500, 500 then 200: three signed attempts, each recorded, delivered', async () => {
    const schedule = [0.3, 0.3, 0.3]
    const s = await service({ schedule, timeoutMs: 5000, pollMs: 50 })
    const r = await receiver((n) => (n <= 2 ? 500 : 200))
    const { event } = await chargeNotifying(s.sk, r.url)
    expect(event.type).toBe('charge.succeeded')

    const queued = await deliveryOf(s.sk, event.id)
    expect(queued).toMatchObject({ object: 'delivery', event: event.id, event_type: 'charge.succeeded', url: r.url })
    const done = await settled(s.sk, queued.id, 'delivered')
    expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200])
    expect(done.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2, 3])
    expect(done.attempts.map((a: { succeeded: boolean }) => a.succeeded)).toEqual([false, false, true])
    expect(done.attempts.map((a: { error: string | null }) => a.error)).toEqual(['http_status', 'http_status', null])
    for (const a of done.attempts) {
      expect(a.duration_ms).toBeGreaterThanOrEqual(0)
    }
    expect(done.attempt_count).toBe(3)
    expect(done.next_attempt_at).toBeNull()
    expect(done.delivered_at).not.toBeNull()
    expectSpacing(done.attempts, schedule)

    // a delivered call is not sent again
    await sleep(700)
    expect(r.calls).toHaveLength(3)

    // the body is the event, every attempt the same bytes
    const shown = await s.sk.get(`/v2/events/${event.id}`)
    for (const call of r.calls) {
      expect(call.body).toBe(r.calls[0]?.body)
      expect(call.headers['content-type']).toBe('application/json')
      expect(call.headers['jackdaw-delivery']).toBe(queued.id)
    }
    const body = JSON.parse(r.calls[0]!.body)
    expect(body).toEqual(shown.body)
    expect(body).toMatchObject({ id: event.id, object: 'event', type: 'charge.succeeded', livemode: false })
    expect(body.data.object.object).toBe('charge')

    // each call verifies with the account's test-mode webhook secret, and only with it
    const secret = (await s.sk.get('/v2/me')).body.webhook_secret as string
    expect(secret).toMatch(/^whsec_/)
    const liveSecret = (await s.skLive.get('/v2/me')).body.webhook_secret as string
    for (const call of r.calls) {
      const header = call.headers['jackdaw-signature'] as string
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
      expect(verifySignature(call.body, header, secret)).toBe(true)
      expect(verifySignature(call.body, header, liveSecret)).toBe(false)
    }
    const last = r.calls[2]!
    const header = last.headers['jackdaw-signature'] as string
    const t = Number(/t=(\d+)/.exec(header)?.[1])
    expect(Math.abs(t - last.at / 1000)).toBeLessThan(5)
    // a changed body does not verify
    const tampered = last.body.replace('"amount":1000', '"amount":100000')
    expect(tampered).not.toBe(last.body)
    expect(verifySignature(tampered, header, secret)).toBe(false)
    expect(verifySignature(`${last.body} `, header, secret)).toBe(false)
    // a signature older than 5 minutes does not verify, one just inside does
    expect(verifySignature(last.body, header, secret, 300, t + 301)).toBe(false)
    expect(verifySignature(last.body, header, secret, 300, t + 299)).toBe(true)
    expect(verifySignature(last.body, sign(last.body, secret, Math.floor(Date.now() / 1000) - 301), secret)).toBe(false)
    // a timestamp changed in the header does not verify either: it is signed
    expect(verifySignature(last.body, header.replace(`t=${t}`, `t=${t + 1}`), secret)).toBe(false)
  })

  it('a rolled webhook secret signs the calls made after the roll', async () => {
    const s = await service({ schedule: [0.3], timeoutMs: 5000, pollMs: 50 })
    const r = await receiver(() => 200)
    const before = (await s.sk.get('/v2/me')).body.webhook_secret
    const rolled = await s.sk.post('/v2/me/webhook_secret/roll')
    expect(rolled.status).toBe(200)
    const { event } = await chargeNotifying(s.sk, r.url)
    const d = await deliveryOf(s.sk, event.id)
    await settled(s.sk, d.id, 'delivered')
    const call = r.calls[0]!
    expect(verifySignature(call.body, call.headers['jackdaw-signature'], rolled.body.secret)).toBe(true)
    expect(verifySignature(call.body, call.headers['jackdaw-signature'], before)).toBe(false)
  })

  it('any 2xx is a proper answer, taken at the first attempt; a 302 is a failed one, and where it points is never called', async () => {
    const s = await service({ schedule: [0.2], timeoutMs: 5000, pollMs: 50 })
    // answers each call with the status its charge's amount names
    const r = await receiver((_n, body) => JSON.parse(body).data.object.amount)
    const target = await receiver(() => 200)
    const redirected: string[] = []
    const redirecting = http.createServer((req, res) => {
      redirected.push(String(req.headers['jackdaw-delivery']))
      req.resume()
      res.writeHead(302, { location: target.url }).end()
    })
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve))
    cleanup.push(() => new Promise<void>((resolve) => redirecting.close(() => resolve())))
    const redirectingUrl = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hooks/jackdaw`

    const proper = []
    for (const status of [201, 202, 299]) proper.push({ status, ...(await chargeNotifying(s.sk, r.url, status)) })
    const moved = await deliveryOf(s.sk, (await chargeNotifying(s.sk, redirectingUrl)).event.id)
    for (const { status, event } of proper) {
      const done = await settled(s.sk, (await deliveryOf(s.sk, event.id)).id, 'delivered')
      expect(done.attempts.map((a: Json) => [a.status_code, a.succeeded, a.error])).toEqual([[status, true, null]])
    }
    const failed = await settled(s.sk, moved.id, 'failed')
    expect(failed.attempts.map((a: Json) => [a.status_code, a.succeeded, a.error])).toEqual([
      [302, false, 'http_status'],
      [302, false, 'http_status'],
    ])
    expect(failed.delivered_at).toBeNull()
    expect(redirected).toEqual([moved.id, moved.id])
    expect(target.calls).toEqual([])
  })

  it("a live-mode call is signed with the live secret and says so; rolling one mode's secret leaves the other's", async () => {
    // a live processor; the local receiver is allowed, as JACKDAW_NOTIFY_ALLOW_HOSTS=127.0.0.1 would
    const s = await service({ schedule: [0.3], timeoutMs: 5000, pollMs: 50 }, { liveProcessor: new Simulator() })
    const r = await receiver(() => 200)
    const liveSecret = (await s.skLive.get('/v2/me')).body.webhook_secret as string
    const testSecret = (await s.sk.get('/v2/me')).body.webhook_secret as string
    expect(liveSecret).not.toBe(testSecret)
    const rolledTest = await s.sk.post('/v2/me/webhook_secret/roll')
    expect(rolledTest.body).toMatchObject({ object: 'webhook_secret', livemode: false })
    expect((await s.skLive.get('/v2/me')).body.webhook_secret).toBe(liveSecret)

    const { event } = await chargeNotifying(s.skLive, r.url)
    expect(event.livemode).toBe(true)
    const d = await deliveryOf(s.skLive, event.id)
    expect(d.livemode).toBe(true)
    expect(await deliveryOf(s.sk, event.id)).toBeUndefined()
    await settled(s.skLive, d.id, 'delivered')
    expect(r.calls).toHaveLength(1)
    const call = r.calls[0]!
    const header = call.headers['jackdaw-signature'] as string
    expect(verifySignature(call.body, header, liveSecret)).toBe(true)
    for (const other of [testSecret, rolledTest.body.secret])
      expect(verifySignature(call.body, header, other)).toBe(false)
    const body = JSON.parse(call.body)
    expect(body).toEqual((await s.skLive.get(`/v2/events/${event.id}`)).body)
    expect(body).toMatchObject({ id: event.id, livemode: true, data: { object: { livemode: true } } })

    const rolledLive = await s.skLive.post('/v2/me/webhook_secret/roll')
    expect(rolledLive.body).toMatchObject({ object: 'webhook_secret', livemode: true })
    expect(rolledLive.body.secret).not.toBe(liveSecret)
    expect((await s.skLive.get('/v2/me')).body.webhook_secret).toBe(rolledLive.body.secret)
    expect((await s.sk.get('/v2/me')).body.webhook_secret).toBe(rolledTest.body.secret)
  })

  it('survives a restart between attempts; calls queued while no worker runs are sent after', async () => {
    const schedule = [2, 1]
    const first = await service({ schedule, timeoutMs: 5000, pollMs: 50 })
    const r = await receiver((n) => (n === 1 ? 503 : 200))
    const { event } = await chargeNotifying(first.sk, r.url)
    const d = await deliveryOf(first.sk, event.id)
    await waitFor('the first attempt', async () => {
      const now = await first.sk.get(`/v2/deliveries/${d.id}`)
      return now.body.attempts.length === 1 ? now.body : undefined
    })
    await first.close()

    // while stopped: the retry falls due and nothing is sent; a process without a worker queues
    // another call
    const queuer = await service()
    const more = await chargeNotifying(queuer.sk, r.url, 2000)
    await sleep(2500)
    expect(r.calls).toHaveLength(1)
    const waiting = await queuer.sk.get(`/v2/deliveries/${d.id}`)
    expect(waiting.body).toMatchObject({ status: 'pending', attempt_count: 1 })
    expect(micros(waiting.body.next_attempt_at)).toBeLessThan(Date.now() * 1000)
    await queuer.close()

    const second = await service({ schedule, timeoutMs: 5000, pollMs: 50 })
    const done = await settled(second.sk, d.id, 'delivered')
    expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200])
    expectSpacing(done.attempts, schedule)
    const other = await deliveryOf(second.sk, more.event.id)
    const otherDone = await settled(second.sk, other.id, 'delivered')
    expect(otherDone.attempts).toHaveLength(1)
    const ids = r.calls.map((c) => JSON.parse(c.body).id)
    expect(ids.sort()).toEqual([event.id, event.id, more.event.id].sort())
  })
})
