import net, { type AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { notifySchedule, parseConfig } from '../../src/config.js'
import { AppError } from '../../src/errors.js'
import { redeliver } from '../../src/notify/deliveries.js'
import { sign, verifySignature } from '../../src/notify/signature.js'
import { Simulator } from '../../src/processor/simulator.js'
import { NotifyAllowList, NotifyHostResolver } from '../../src/services/notify-address.js'
import { claimDue, INTERRUPTED } from '../../src/store/deliveries.js'
import { type Client, cardSource, client, REDIRECT } from '../helpers/app.js'
import { fakeDns } from '../helpers/dns.js'
import {
  chargeNotifying,
  deliveryOf,
  type Harness,
  harness,
  micros,
  type Receiver,
  type Service,
  settled,
  sleep,
  startReceiver,
  waitFor,
} from './notify-harness.js'

let h: Harness
const cleanup: (() => Promise<void>)[] = []
beforeAll(async () => {
  h = await harness()
})
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})
afterAll(() => h.close())

async function service(...args: Parameters<Harness['open']>): Promise<Service> {
  const s = await h.open(...args)
  cleanup.push(() => s.close())
  return s
}

async function receiver(answer: Receiver['answer']): Promise<Receiver> {
  const r = await startReceiver(answer)
  cleanup.push(() => r.close())
  return r
}

/** Attempt start times must be at least the schedule's gaps apart (jitter only lengthens them). */
function expectSpacing(attempts: { started_at: string }[], scheduleSeconds: number[]) {
  for (let i = 1; i < attempts.length; i++) {
    const gapMicros = micros(attempts[i]!.started_at) - micros(attempts[i - 1]!.started_at)
    expect(gapMicros).toBeGreaterThanOrEqual((scheduleSeconds[i - 1] as number) * 1_000_000)
  }
}

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

describe("notify calls to the service's own network", () => {
  it('are refused in test mode too, unless the operator allows the receiver, and attempts record a class of error', async () => {
    const r = await receiver(() => 200)
    const port = new URL(r.url).port
    const dns = await fakeDns((name, type) => (name === 'inside.test' && type === 'A' ? ['127.0.0.1'] : []))
    cleanup.push(() => dns.close())
    // a generous limit: on a loaded machine the fake name server answers late
    const notifyResolver = new NotifyHostResolver({ servers: [dns.server], timeoutMs: 5_000 })
    const s = await service(
      { schedule: [], timeoutMs: 2000, pollMs: 50 },
      { notifyAllow: NotifyAllowList.none, notifyResolver },
    )
    // addresses are refused when the source is made, with the published test key
    for (const notify of [
      r.url,
      'http://127.0.0.1:5432/',
      'http://127.0.0.1:6379/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:127.0.0.1]:5432/',
      `http://localhost:${port}/`,
    ]) {
      const refused = await s.pk.post('/v2/sources/', { ...cardSource(), redirect: { ...REDIRECT, notify } })
      expect(refused.status, notify).toBe(422)
      expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'redirect.notify' })
    }
    // a name is checked when it is called: this one resolves to loopback, and no call is made
    const { event } = await chargeNotifying(s.sk, `http://inside.test:${port}/hook`)
    const d = await deliveryOf(s.sk, event.id)
    const failed = await settled(s.sk, d.id, 'failed')
    expect(failed.attempts).toEqual([expect.objectContaining({ status_code: null, error: 'address_refused' })])
    expect(r.calls).toHaveLength(0)
    // a receiver nothing listens on says no more than that (the worker that refuses local
    // receivers stops first: on one store, either worker could take the call)
    await s.close()
    const closed = `http://127.0.0.1:${await closedPort()}/hook`
    const allowed = await service({ schedule: [], timeoutMs: 2000, pollMs: 50 })
    const refusedCall = await chargeNotifying(allowed.sk, closed)
    const attempt = (await settled(allowed.sk, (await deliveryOf(allowed.sk, refusedCall.event.id)).id, 'failed'))
      .attempts[0]
    expect(attempt).toMatchObject({ status_code: null, error: 'connection_refused' })
  })
})

/** A port of 127.0.0.1 that nothing listens on: one the system handed out and took back. */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('notify calls of several accounts', () => {
  it("one account's receivers that never answer hold back neither another account's calls nor more than their share", async () => {
    const s = await service({
      schedule: [],
      timeoutMs: 60_000,
      pollMs: 50,
      concurrency: 10,
      accountConcurrency: 3,
      hostConcurrency: 5,
    })
    const hanging = await receiver(() => 'hang')
    const answering = await receiver(() => 200)
    const accountOf = async (name: string) => client(s.app, (await s.app.services.accounts.create(name)).sk_test_key)
    const [a, b, c] = [s.sk, await accountOf('Account B'), await accountOf('Account C')]
    const queue = async (as: Client, url: string, n: number) => {
      const events = new Set<string>()
      for (let i = 0; i < n; i += 10) {
        const made = await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => chargeNotifying(as, url)))
        for (const { event } of made) events.add(event.id)
      }
      return events
    }
    // account A: 40 calls to a receiver that accepts and never answers
    const ofA = await queue(a, hanging.url, 40)
    await waitFor('A at its share', async () => hanging.calls.length >= 3)
    // account C: 10 more to the same host, which takes 5 calls at most, whoever makes them
    const ofC = await queue(c, hanging.url, 10)
    await waitFor('the host at its cap', async () => hanging.calls.length >= 5)
    // account B's one call goes out at once
    const queuedAt = Date.now()
    await chargeNotifying(b, answering.url)
    await waitFor('B called', async () => answering.calls.length === 1, 10_000)
    expect(Date.now() - queuedAt).toBeLessThan(2_000)
    await sleep(300)
    // A kept to its 3, the host to its 5: the other 45 calls wait their turn
    const ids = hanging.calls.map((call) => JSON.parse(call.body).id as string)
    expect(ids.filter((id) => ofA.has(id))).toHaveLength(3)
    expect(ids.filter((id) => ofC.has(id))).toHaveLength(2)
    expect(ids).toHaveLength(5)
  })
})

describe('the default schedule of notify calls', () => {
  it('is about 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, then every 12 h, and stops within 3 days', () => {
    const gaps = notifySchedule(parseConfig({}))
    expect(gaps.slice(0, 6)).toEqual([60, 300, 1800, 7200, 18000, 36000])
    expect(new Set(gaps.slice(6))).toEqual(new Set([12 * 3600]))
    const lastCall = gaps.reduce((a, b) => a + b, 0)
    expect(lastCall).toBeLessThanOrEqual(3 * 24 * 3600)
    // one more 12 h gap would go past the 3 days
    expect(lastCall + 12 * 3600).toBeGreaterThan(3 * 24 * 3600)
  })
})
