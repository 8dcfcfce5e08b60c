import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSignatureHeader, sign, verifySignature } from '../../src/notify/signature.js'
import { cardSource, client, type Json } from '../helpers/app.js'
import { chargeNotifying, deliveryOf, type Harness, harness, type Service } from './notify-harness.js'

let h: Harness
let s: Service
beforeAll(async () => {
  h = await harness()
  // no worker: the calls stay queued, which is all these tests look at
  s = await h.open()
})
afterAll(() => h.close())

const NOTIFY = 'http://127.0.0.1:9/never-called'

/** Every event of the account's list, newest first, paged through as a client would. */
async function allEventIds(): Promise<string[]> {
  const ids: string[] = []
  let path: string | null = '/v2/events/?limit=100'
  while (path) {
    const page: Json = await s.sk.get(path)
    expect(page.status).toBe(200)
    ids.push(...page.body.data.map((e: { id: string }) => e.id))
    path = page.body.next
  }
  return ids
}

describe('events', () => {
  it('lists events newest first and retrieves each; pages with start_after', async () => {
    const made: string[] = []
    for (let i = 0; i < 3; i++) {
      const src = await s.sk.post('/v2/sources/', cardSource())
      const ch = await s.sk.post('/v2/charges/', { amount: 100 + i, currency: 'usd', source: src.body.id })
      expect(ch.status).toBe(201)
      made.push(ch.body.id)
    }
    const all = await s.sk.get('/v2/events/?limit=100')
    expect(all.status).toBe(200)
    expect(all.body).toMatchObject({ object: 'list', next: null })
    const ours = all.body.data.filter((e: { data: { object: { id: string } } }) => made.includes(e.data.object.id))
    expect(ours.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toEqual([...made].reverse())
    for (const e of ours) {
      expect(e).toMatchObject({ object: 'event', type: 'charge.succeeded', livemode: false })
      expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/)
      const one = await s.sk.get(`/v2/events/${e.id}`)
      expect(one.status).toBe(200)
      expect(one.body).toEqual(e)
    }
    const ids = all.body.data.map((e: { id: string }) => e.id)
    expect([...ids].sort().reverse()).toEqual(ids)

    const first = await s.sk.get('/v2/events/?limit=2')
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2))
    expect(first.body.next).toBe(`/v2/events/?start_after=${ids[1]}&limit=2`)
    const second = await s.sk.get(first.body.next)
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(2, 4))
  })

  it('an authorization event holds the charge exactly as create answered it and as it is stored', async () => {
    const cards = {
      succeeded: '4242424242424242',
      pending: '4000000000003220',
      failed: '4000000000000127',
    }
    for (const [status, number] of Object.entries(cards)) {
      const src = await s.sk.post('/v2/sources/', cardSource({ number }))
      const ch = await s.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.body.id })
      expect(ch.status).toBe(201)
      expect(ch.body.status).toBe(status)
      expect(ch.body.updated_at >= ch.body.created_at).toBe(true)
      expect(ch.body.source.updated_at >= src.body.updated_at).toBe(true)
      // the cvc check the processor made shows at once and stays
      if (status !== 'pending') expect(ch.body.source.card.cvc_checked).toBe(status === 'failed' ? 'fail' : 'pass')
      const stored = await s.sk.get(`/v2/charges/${ch.body.id}`)
      expect(stored.body).toEqual(ch.body)
      const events = (await s.sk.get('/v2/events/?limit=10')).body.data.filter(
        (e: { data: { object: { id: string } } }) => e.data.object.id === ch.body.id,
      )
      expect(events).toHaveLength(1)
      expect(events[0].type).toBe(`charge.${status}`)
      expect(events[0].data.object).toEqual(ch.body)
      expect(events[0].created_at).toBe(ch.body.updated_at)
    }
  })

  it('records each state change: a refund adds charge.refunded with the charge as it then was', async () => {
    const src = await s.sk.post('/v2/sources/', cardSource())
    const ch = await s.sk.post('/v2/charges/', { amount: 900, currency: 'usd', source: src.body.id })
    const refund = await s.sk.post(`/v2/charges/${ch.body.id}/refund`, {})
    expect(refund.status).toBe(200)
    const events = (await s.sk.get('/v2/events/?limit=100')).body.data.filter(
      (e: { data: { object: { id: string } } }) => e.data.object.id === ch.body.id,
    )
    expect(events.map((e: { type: string }) => e.type)).toEqual(['charge.refunded', 'charge.succeeded'])
    expect(events[1].data.object.amount_refunded).toBe(0)
    expect(events[0].data.object.amount_refunded).toBe(900)
  })

  it("another account's event, or this account's in the other mode, is 404", async () => {
    const mine = (await s.sk.get('/v2/events/?limit=1')).body.data[0]
    expect(mine).toBeDefined()
    const other = await s.app.services.accounts.create('Other account')
    const otherSk = client(s.app, other.sk_test_key)
    const foreign = await otherSk.get(`/v2/events/${mine.id}`)
    expect(foreign.status).toBe(404)
    expect(foreign.body.error.code).toBe('resource_missing')
    expect((await otherSk.get('/v2/events/')).body.data).toEqual([])
    const live = await s.skLive.get(`/v2/events/${mine.id}`)
    expect(live.status).toBe(404)
    const missing = await s.sk.get('/v2/events/evt_00000000000000000000000000000000')
    expect(missing.status).toBe(404)
    expect((await s.sk.get('/v2/events/?start_after=evt_00000000000000000000000000000000')).body.error.code).toBe(
      'cursor_invalid',
    )
  })

  it('pages 20 by default and up to 100; limit 0 or 101 is 422; a charge id as start_after is 400', async () => {
    // more events than one default page
    for (let n = (await allEventIds()).length; n <= 21; n++) {
      const src = await s.sk.post('/v2/sources/', cardSource())
      expect((await s.sk.post('/v2/charges/', { amount: 100 + n, currency: 'usd', source: src.body.id })).status).toBe(
        201,
      )
    }
    const all = await allEventIds()
    expect(all.length).toBeGreaterThan(21)
    const first = await s.sk.get('/v2/events/')
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 20))
    expect(first.body.next).toBe(`/v2/events/?start_after=${all[19]}`)
    const second = await s.sk.get(first.body.next)
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(20, 40))
    const last = await s.sk.get(`/v2/events/?start_after=${all[all.length - 2]}`)
    expect(last.body.data.map((e: { id: string }) => e.id)).toEqual([all[all.length - 1]])
    expect(last.body.next).toBeNull()

    expect((await s.sk.get('/v2/events/?limit=1')).body.data).toHaveLength(1)
    expect((await s.sk.get('/v2/events/?limit=100')).body.data).toHaveLength(Math.min(all.length, 100))
    for (const limit of ['0', '101']) {
      const bad = await s.sk.get(`/v2/events/?limit=${limit}`)
      expect(bad.status, limit).toBe(422)
      expect(bad.body.error.param, limit).toBe('limit')
    }
    const aCharge = (await s.sk.get('/v2/charges/?limit=1')).body.data[0].id
    const notAnEvent = await s.sk.get(`/v2/events/?start_after=${aCharge}`)
    expect(notAnEvent.status).toBe(400)
    expect(notAnEvent.body.error).toMatchObject({ code: 'cursor_invalid', param: 'start_after' })
  })

  it('events and deliveries need a secret key', async () => {
    for (const path of ['/v2/events/', '/v2/deliveries/']) {
      const res = await s.pk.get(path)
      expect(res.status).toBe(403)
      expect(res.body.error.code).toBe('secret_key_required')
      expect((await s.app.inject({ method: 'GET', url: path })).statusCode).toBe(401)
    }
  })
})

describe('deliveries', () => {
  it('an event of a source with redirect.notify is queued in its transaction; others are not', async () => {
    const { event } = await chargeNotifying(s.sk, NOTIFY)
    const d = await deliveryOf(s.sk, event.id)
    expect(d).toMatchObject({
      object: 'delivery',
      livemode: false,
      event: event.id,
      event_type: 'charge.succeeded',
      url: NOTIFY,
      status: 'pending',
      attempt_count: 0,
      delivered_at: null,
      attempts: [],
    })
    expect(d.id).toMatch(/^dlv_[0-9a-f]{32}$/)
    expect(d.next_attempt_at).not.toBeNull()
    expect((await s.sk.get(`/v2/deliveries/${d.id}`)).body).toEqual(d)

    const src = await s.sk.post('/v2/sources/', cardSource())
    const ch = await s.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.body.id })
    const ev = (await s.sk.get('/v2/events/?limit=100')).body.data.find(
      (e: { data: { object: { id: string } } }) => e.data.object.id === ch.body.id,
    )
    expect(await deliveryOf(s.sk, ev.id)).toBeUndefined()
  })

  it('a charge refused before any event queues nothing', async () => {
    const before = (await s.sk.get('/v2/deliveries/?limit=100')).body.data.length
    const bad = await s.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: 'src_missing' })
    expect(bad.status).toBe(404)
    expect((await s.sk.get('/v2/deliveries/?limit=100')).body.data).toHaveLength(before)
  })

  it('lists newest first with the shared pagination', async () => {
    for (let i = 0; i < 2; i++) await chargeNotifying(s.sk, NOTIFY, 500 + i)
    const all = (await s.sk.get('/v2/deliveries/?limit=100')).body.data.map((d: { id: string }) => d.id)
    expect(all.length).toBeGreaterThanOrEqual(3)
    expect([...all].sort().reverse()).toEqual(all)
    const page = await s.sk.get('/v2/deliveries/?limit=1')
    expect(page.body.data.map((d: { id: string }) => d.id)).toEqual([all[0]])
    expect(page.body.next).toBe(`/v2/deliveries/?start_after=${all[0]}&limit=1`)
    const next = await s.sk.get(page.body.next)
    expect(next.body.data.map((d: { id: string }) => d.id)).toEqual([all[1]])
    const bad = await s.sk.get('/v2/deliveries/?start_after=dlv_00000000000000000000000000000000')
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('cursor_invalid')
  })

  it("another account's delivery, or the other mode's, is 404; only a failed one can be redelivered", async () => {
    const { event } = await chargeNotifying(s.sk, NOTIFY)
    const d = await deliveryOf(s.sk, event.id)
    const other = await s.app.services.accounts.create('Third account')
    const otherSk = client(s.app, other.sk_test_key)
    for (const c of [otherSk, s.skLive]) {
      expect((await c.get(`/v2/deliveries/${d.id}`)).status).toBe(404)
      const re = await c.post(`/v2/deliveries/${d.id}/redeliver`)
      expect(re.status).toBe(404)
      expect(re.body.error.code).toBe('resource_missing')
    }
    expect((await otherSk.get('/v2/deliveries/')).body.data).toEqual([])
    const pending = await s.sk.post(`/v2/deliveries/${d.id}/redeliver`)
    expect(pending.status).toBe(400)
    expect(pending.body.error.code).toBe('delivery_not_failed')
    expect((await s.sk.post(`/v2/deliveries/${d.id}/redeliver`, { extra: 1 })).status).toBe(422)
    expect((await s.pk.post(`/v2/deliveries/${d.id}/redeliver`)).status).toBe(403)
    expect((await s.sk.get('/v2/deliveries/dlv_00000000000000000000000000000000')).status).toBe(404)
  })

  it("another account's or the other mode's event or delivery is no cursor, and their charge= lists nothing", async () => {
    const { charge, event } = await chargeNotifying(s.sk, NOTIFY)
    const d = await deliveryOf(s.sk, event.id)
    const other = client(s.app, (await s.app.services.accounts.create('Cursor account')).sk_test_key)
    for (const c of [other, s.skLive]) {
      for (const path of [`/v2/events/?start_after=${event.id}`, `/v2/deliveries/?start_after=${d.id}`]) {
        const res = await c.get(path)
        expect(res.status, path).toBe(400)
        expect(res.body.error).toMatchObject({ code: 'cursor_invalid', param: 'start_after' })
      }
      for (const list of ['events', 'deliveries']) {
        const res = await c.get(`/v2/${list}/?charge=${charge.id}`)
        expect(res.status, list).toBe(200)
        expect(res.body.data, list).toEqual([])
      }
    }
    // while the owner pages past them, and finds them by their charge
    expect((await s.sk.get(`/v2/events/?start_after=${event.id}`)).status).toBe(200)
    expect((await s.sk.get(`/v2/deliveries/?start_after=${d.id}`)).status).toBe(200)
    expect((await s.sk.get(`/v2/deliveries/?charge=${charge.id}`)).body.data.map((x: Json) => x.id)).toEqual([d.id])
  })

  it('the deliveries endpoints are in the OpenAPI document', async () => {
    const doc = JSON.parse((await s.app.inject({ method: 'GET', url: '/v2/openapi.json' })).body)
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v2/deliveries/', '/v2/deliveries/{dlv_id}', '/v2/deliveries/{dlv_id}/redeliver']),
    )
  })
})

describe('signature recipe', () => {
  const secret = 'whsec_abcdefghijklmnopqrstuvwxyz012345'
  const body = '{"id":"evt_1","object":"event"}'

  it('signs t.body with HMAC-SHA256 and verifies within five minutes', async () => {
    const { createHmac } = await import('node:crypto')
    const header = sign(body, secret, 1_800_000_000)
    const expected = createHmac('sha256', secret).update(`1800000000.${body}`).digest('hex')
    expect(header).toBe(`t=1800000000,v1=${expected}`)
    expect(parseSignatureHeader(header)).toEqual({ timestamp: 1_800_000_000, signatures: [expected] })
    expect(verifySignature(body, header, secret, 300, 1_800_000_000)).toBe(true)
    expect(verifySignature(body, header, secret, 300, 1_800_000_300)).toBe(true)
    expect(verifySignature(body, header, secret, 300, 1_800_000_301)).toBe(false)
    expect(verifySignature(body, header, secret, 300, 1_799_999_699)).toBe(false)
    expect(verifySignature(body, sign(body, secret), secret)).toBe(true)
  })

  it('refuses another body, another secret, and malformed headers', () => {
    const now = 1_800_000_000
    const header = sign(body, secret, now)
    expect(verifySignature(`${body}\n`, header, secret, 300, now)).toBe(false)
    expect(verifySignature(body, header, `${secret}x`, 300, now)).toBe(false)
    expect(verifySignature(body, header, '', 300, now)).toBe(false)
    for (const bad of [undefined, '', 'v1=abc', `t=${now}`, `t=${now},v1=zz`, `t=x,${header.split(',')[1]}`]) {
      expect(verifySignature(body, bad, secret, 300, now)).toBe(false)
    }
    // an extra scheme or a second v1 (a receiver checking against two secrets) is fine
    const other = sign(body, 'whsec_other', now).split(',')[1]
    expect(verifySignature(body, `${header},v0=abc,${other}`, secret, 300, now)).toBe(true)
    expect(verifySignature(body, `t=${now},${other},${header.split(',')[1]}`, secret, 300, now)).toBe(true)
  })
})
