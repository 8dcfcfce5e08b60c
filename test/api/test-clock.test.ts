import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, client, type Json, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { startReceiver, waitFor } from '../notify/notify-harness.js'

let t: TestApp
/** a second account on the same store */
let otherShop: Client
beforeAll(async () => {
  t = await testApp()
  otherShop = client(t.app, (await t.app.services.accounts.create('Other shop')).sk_test_key)
})
afterAll(() => t.close())

const seconds = (iso: string) => Date.parse(iso) / 1000
/** `2026-11-21T10:15:30.123456Z` in microseconds since the epoch */
const micros = (iso: string) => Date.parse(`${iso.slice(0, 19)}Z`) * 1000 + Number(iso.slice(20, 26))

describe('the test clock', () => {
  it('starts at the real time, and moves forward by what is asked, for that account only', async () => {
    const start = await t.sk.get('/v2/test/clock')
    expect(start.status).toBe(200)
    expect(start.body).toMatchObject({ object: 'test_clock', offset_seconds: 0 })
    expect(start.body.now).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    expect(Math.abs(seconds(start.body.now) - Date.now() / 1000)).toBeLessThan(5)

    const week = await t.sk.post('/v2/test/clock/advance', { seconds: 7 * 86400 })
    expect(week.status).toBe(200)
    expect(week.body.offset_seconds).toBe(7 * 86400)
    expect(seconds(week.body.now) - Date.now() / 1000).toBeGreaterThan(7 * 86400 - 5)
    const more = await t.sk.post('/v2/test/clock/advance', { seconds: 60 })
    expect(more.body.offset_seconds).toBe(7 * 86400 + 60)
    expect((await t.sk.get('/v2/test/clock')).body.offset_seconds).toBe(7 * 86400 + 60)

    // another account's clock has not moved
    const theirs = await otherShop.get('/v2/test/clock')
    expect(theirs.status).toBe(200)
    expect(theirs.body.offset_seconds).toBe(0)
  })

  it('counts every one of advances sent at once', async () => {
    const before = (await t.sk.get('/v2/test/clock')).body.offset_seconds
    await Promise.all(Array.from({ length: 10 }, () => t.sk.post('/v2/test/clock/advance', { seconds: 3 })))
    expect((await t.sk.get('/v2/test/clock')).body.offset_seconds).toBe(before + 30)
  })

  it('refuses 0, a negative number, more than a year, a fraction, text or another field with a 422', async () => {
    const before = (await t.sk.get('/v2/test/clock')).body.offset_seconds
    for (const [body, code] of [
      [{ seconds: 0 }, 'parameter_invalid'],
      [{ seconds: -60 }, 'parameter_invalid'],
      [{ seconds: 31_536_001 }, 'parameter_invalid'],
      [{ seconds: 1.5 }, 'parameter_invalid'],
      [{ seconds: 'a day' }, 'parameter_invalid'],
      [{}, 'parameter_missing'],
      [{ seconds: 10, back: true }, 'parameter_unknown'],
    ] as const) {
      const res = await t.sk.post('/v2/test/clock/advance', body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body.error.code, JSON.stringify(body)).toBe(code)
    }
    expect((await t.sk.post('/v2/test/clock/advance', { seconds: 31_536_000 })).status).toBe(200)
    expect((await t.sk.get('/v2/test/clock')).body.offset_seconds).toBe(before + 31_536_000)
  })

  it('runs at most a hundred years ahead: an advance past that is refused and moves nothing', async () => {
    const shop = client(t.app, (await t.app.services.accounts.create('Far ahead')).sk_test_key)
    // 101 advances of a year at once: a hundred move the clock, one is refused
    const advances = await Promise.all(
      Array.from({ length: 101 }, () => shop.post('/v2/test/clock/advance', { seconds: 31_536_000 })),
    )
    expect(advances.filter((r) => r.status === 200)).toHaveLength(100)
    const refused = advances.filter((r) => r.status !== 200)
    expect(refused).toHaveLength(1)
    expect(refused[0]?.status).toBe(422)
    expect(refused[0]?.body.error).toMatchObject({ code: 'parameter_invalid', param: 'seconds' })
    expect(refused[0]?.body.error.message).toContain('at most 3153600000 seconds (100 years) ahead')
    expect(refused[0]?.body.error.detail).toEqual([
      { loc: ['body', 'seconds'], msg: refused[0]?.body.error.message, type: 'value_error' },
    ])
    const refusedAgain = await shop.post('/v2/test/clock/advance', { seconds: 1 })
    expect(refusedAgain.status).toBe(422)
    expect(refusedAgain.body.error.message).toContain('it is 3153600000 seconds ahead now')
    const clock = (await shop.get('/v2/test/clock')).body
    expect(clock.offset_seconds).toBe(3_153_600_000)
    expect(seconds(clock.now) - Date.now() / 1000).toBeGreaterThan(3_153_600_000 - 60)
    // everything still works at that time, with four-digit years
    const src = await shop.post('/v2/sources/', cardSource())
    const charge = await shop.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    expect(charge.status).toBe(201)
    expect(charge.body.status).toBe('succeeded')
    expect(charge.body.created_at).toMatch(/^21\d{2}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    const list = await shop.get('/v2/charges/')
    expect(list.body.data.map((c: Json) => c.id)).toEqual([charge.body.id])
  })

  it('does not exist for live keys, and needs a secret key', async () => {
    const before = (await t.sk.get('/v2/test/clock')).body.offset_seconds
    for (const res of [
      await t.skLive.get('/v2/test/clock'),
      await t.skLive.post('/v2/test/clock/advance', { seconds: 60 }),
      // whatever it sends: a body or query the route would refuse tells nothing of it either
      await t.skLive.get('/v2/test/clock?x=1'),
      await t.skLive.post('/v2/test/clock/advance', {}),
    ]) {
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe('route_missing')
    }
    expect((await t.pk.get('/v2/test/clock')).status).toBe(403)
    expect((await t.anon.get('/v2/test/clock')).status).toBe(401)
    expect((await t.sk.get('/v2/test/clock')).body.offset_seconds).toBe(before)
  })

  it("stamps a charge's outcome on the running clock, as long after its creation as the processor took", async () => {
    const c = client(t.app, (await t.app.services.accounts.create('Slow processor shop')).sk_test_key)
    await c.post('/v2/test/clock/advance', { seconds: 86_400 })
    const src = await c.post('/v2/sources/', cardSource())
    const before = (await c.get('/v2/test/clock')).body.now
    const charge = await c.post(
      '/v2/charges/',
      { amount: 1000, currency: 'usd', source: src.body.id },
      { 'jackdaw-test-fault': 'processor_latency=400' },
    )
    const after = (await c.get('/v2/test/clock')).body.now
    expect(charge.body.status).toBe('succeeded')
    const { created_at, updated_at } = charge.body
    expect(created_at >= before && updated_at <= after).toBe(true)
    // in microseconds, as the API shows them; a timer of 400 ms may fire within its last millisecond
    expect(micros(updated_at) - micros(created_at)).toBeGreaterThanOrEqual(399_000)
    const event = (await c.get('/v2/events/')).body.data[0]
    expect(event).toMatchObject({ type: 'charge.succeeded', created_at: updated_at })
    expect(event.data.object.updated_at).toBe(updated_at)
    expect((await c.get(`/v2/charges/${charge.body.id}`)).body.updated_at).toBe(updated_at)
  })

  it('is in the OpenAPI document under the test-mode tag', async () => {
    const doc = (await t.anon.get('/v2/openapi.json')).body
    expect(doc.paths['/v2/test/clock'].get.tags).toEqual(['test-mode'])
    const advance = doc.paths['/v2/test/clock/advance'].post
    expect(advance.tags).toEqual(['test-mode'])
    const schema = advance.requestBody.content['application/json'].schema
    expect(schema.properties.seconds).toMatchObject({ minimum: 1, maximum: 31_536_000 })
  })
})

describe('payer timeouts on the test clock', () => {
  it("fail an account's waiting charges once its clock passes the timeout, at once, and no other account's", async () => {
    const receiver = await startReceiver(() => 200)
    // a day's payer timeout, swept every minute: only the advance can make the sweep act in time
    const app = await testApp(
      {},
      {
        recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: 86_400_000 },
        notify: { schedule: [1], timeoutMs: 2000, pollMs: 100 },
      },
    )
    try {
      const waiting = async (c: Client) => {
        const src = await c.post('/v2/sources/', {
          ...cardSource({ number: '4000000000003220' }),
          redirect: { ...REDIRECT, notify: receiver.url },
        })
        const ch = await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
        expect(ch.body.status).toBe('pending')
        return ch.body.id as string
      }
      const mine = await waiting(app.sk)
      const bystander = client(app.app, (await app.app.services.accounts.create('Bystander')).sk_test_key)
      const theirs = await waiting(bystander)

      // an hour short of the timeout: nothing fails
      await app.sk.post('/v2/test/clock/advance', { seconds: 86_400 - 3600 })
      await new Promise((r) => setTimeout(r, 1000))
      expect((await app.sk.get(`/v2/charges/${mine}`)).body.status).toBe('pending')

      await app.sk.post('/v2/test/clock/advance', { seconds: 7200 })
      let charge = (await app.sk.get(`/v2/charges/${mine}`)).body
      // at once: long before the minute of the sweep's interval (a second on an idle machine)
      for (let i = 0; i < 100 && charge.status === 'pending'; i++) {
        await new Promise((r) => setTimeout(r, 50))
        charge = (await app.sk.get(`/v2/charges/${mine}`)).body
      }
      expect(charge).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
      const events = (await app.sk.get('/v2/events/?limit=100')).body.data
      expect(events.some((e: Json) => e.type === 'charge.failed' && e.data.object.id === mine)).toBe(true)
      expect((await bystander.get(`/v2/charges/${theirs}`)).body.status).toBe('pending')
      // and its notify call goes out, stamped on the account's clock
      const call = await waitFor(
        'the charge.failed call',
        async () => receiver.calls.map((c) => JSON.parse(c.body) as Json).find((e) => e.type === 'charge.failed'),
        5000,
      )
      expect(call.data.object).toMatchObject({ id: mine, status: 'failed', failure_data: { code: 'payment_expired' } })
      expect(seconds(call.created_at) - Date.now() / 1000).toBeGreaterThan(86_400)
      const failedCalls = receiver.calls.map((c) => JSON.parse(c.body)).filter((e) => e.type === 'charge.failed')
      expect(failedCalls.map((e) => e.data.object.id)).toEqual([mine])
    } finally {
      await app.close()
      await receiver.close()
    }
  })
})

describe('many charges overdue at once', () => {
  it('fail in the pass the advance asks for, however many there are', async () => {
    const app = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: 3_600_000 } })
    try {
      const ids: string[] = []
      // more than the sweep claims at a time, three times over
      for (let i = 0; i < 61; i++) {
        const src = await app.sk.post('/v2/sources/', { type: 'qr_a', redirect: REDIRECT })
        ids.push((await app.sk.post('/v2/charges/', { amount: 100, currency: 'usd', source: src.body.id })).body.id)
      }
      await app.sk.post('/v2/test/clock/advance', { seconds: 3601 })
      const pending = async () => {
        const list = (await app.sk.get('/v2/charges/?limit=100')).body.data as Json[]
        return list.filter((c) => c.status === 'pending').length
      }
      let left = await pending()
      for (let i = 0; i < 100 && left > 0; i++) {
        await new Promise((r) => setTimeout(r, 50))
        left = await pending()
      }
      expect(left).toBe(0)
      const failed = await Promise.all(ids.map(async (id) => (await app.sk.get(`/v2/charges/${id}`)).body))
      expect(new Set(failed.map((c) => c.failure_data?.code))).toEqual(new Set(['payment_expired']))
    } finally {
      await app.close()
    }
  })
})

describe('an operation under way when the clock is advanced', () => {
  it('is finished once, by the request that began it, not a second time by the recovery sweep', async () => {
    // the advance runs the sweep at once; only the real time says whether a process is still at work
    const app = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 5_000, payerTimeoutMs: 86_400_000 } })
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const slow = { 'jackdaw-test-fault': 'processor_latency=1500' }
    try {
      const src = await app.sk.post('/v2/sources/', cardSource())
      const charging = app.sk.post(
        '/v2/charges/',
        { amount: 1000, currency: 'usd', source: src.body.id, capture: false },
        slow,
      )
      await pause(300)
      expect((await app.sk.post('/v2/test/clock/advance', { seconds: 120 })).status).toBe(200)
      const charge = (await charging).body
      expect(charge).toMatchObject({ status: 'succeeded', captured: false })
      const capturing = app.sk.post(`/v2/charges/${charge.id}/capture`, {}, slow)
      await pause(300)
      expect((await app.sk.post('/v2/test/clock/advance', { seconds: 120 })).status).toBe(200)
      expect((await capturing).body).toMatchObject({ status: 'succeeded', captured: true })
      await pause(500)
      const events = (await app.sk.get(`/v2/events/?charge=${charge.id}`)).body.data
      expect(events.map((e: Json) => e.type)).toEqual(['charge.captured', 'charge.succeeded'])
    } finally {
      await app.close()
    }
  })
})

describe('a card on the test clock', () => {
  it('expires as the clock passes its month: a saved card is then declined expired_card', async () => {
    const shop = client(t.app, (await t.app.services.accounts.create('Renewals')).sk_test_key)
    const year = Number((await shop.get('/v2/test/clock')).body.now.slice(0, 4)) + 1
    const src = await shop.post('/v2/sources/', cardSource({ exp_month: '12', exp_year: String(year) }))
    expect(src.status, src.text).toBe(200)
    const customer = (await shop.post('/v2/customers/', { email: 'renew@example.com', description: 'Renewals' })).body
    expect((await shop.post(`/v2/customers/${customer.id}/sources`, { source: src.body.id })).status).toBe(200)
    const charge = () =>
      shop.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id, customer: customer.id })
    expect((await charge()).body.status).toBe('succeeded')

    // still valid through the last day of its month
    const clock = (await shop.get('/v2/test/clock')).body.now as string
    const toLastDay = Math.floor((Date.parse(`${year}-12-31T12:00:00Z`) - Date.parse(clock)) / 1000)
    for (let left = toLastDay; left > 0; left -= 31_536_000) {
      expect((await shop.post('/v2/test/clock/advance', { seconds: Math.min(left, 31_536_000) })).status).toBe(200)
    }
    expect((await charge()).body.status).toBe('succeeded')

    expect((await shop.post('/v2/test/clock/advance', { seconds: 86_400 })).status).toBe(200)
    const declined = await charge()
    expect(declined.status).toBe(201)
    expect(declined.body).toMatchObject({ status: 'failed', authorized: false })
    expect(declined.body.failure_data.code).toBe('expired_card')
    // another account, on the real time, charges the same card's month still
    const fresh = await otherShop.post('/v2/sources/', cardSource({ exp_month: '12', exp_year: String(year) }))
    const other = await otherShop.post('/v2/charges/', { amount: 500, currency: 'usd', source: fresh.body.id })
    expect(other.body.status).toBe('succeeded')
  })
})
