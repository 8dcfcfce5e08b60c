import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readStream, type StreamMessage } from '../../src/client/sse.js'
import { insertEvent } from '../../src/store/events.js'
import { cardSource, client } from '../helpers/app.js'
import { type ListeningApp, listeningApp } from '../helpers/listening.js'

/**
 * GET /v2/events/stream over a real connection: server-sent events with `id:` the event id and
 * `data:` the event; a new stream starts after what is stored, and names that point first as an
 * id with no data; `Last-Event-ID` resumes with every event after it; an event that commits after
 * a newer one was sent still comes.
 */

let t: ListeningApp
beforeAll(async () => {
  t = await listeningApp({}, { eventStream: { pollMs: 50 } })
})
afterAll(() => t.close())

function open(key: string, lastEventId?: string) {
  const controller = new AbortController()
  const response = fetch(`${t.url}/v2/events/stream`, {
    headers: { authorization: `Bearer ${key}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: controller.signal,
  })
  // the events; `fields` has every message, those without data (an id, a retry delay) too
  const messages: (StreamMessage & { data: string })[] = []
  const fields: StreamMessage[] = []
  const reading = response.then(async (res) => {
    if (!res.body) return
    try {
      for await (const m of readStream(res.body)) {
        fields.push(m)
        if (m.data !== undefined) messages.push({ ...m, data: m.data })
      }
    } catch {
      // aborted
    }
  })
  return {
    response,
    messages,
    fields,
    reading,
    async until(n: number, timeoutMs = 10_000) {
      const started = Date.now()
      while (messages.length < n) {
        if (Date.now() - started > timeoutMs) throw new Error(`${messages.length} of ${n} messages`)
        await new Promise((r) => setTimeout(r, 20))
      }
      return messages
    },
    async close() {
      controller.abort()
      await reading
    },
  }
}

/** what `find` finds, once it does */
async function until<T>(find: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() - started > timeoutMs) throw new Error(`nothing found in ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function charge(amount = 500): Promise<string> {
  const src = await t.sk.post('/v2/sources/', cardSource())
  const ch = await t.sk.post('/v2/charges/', { amount, currency: 'usd', source: src.body.id })
  return ch.body.id
}

describe('the event stream', () => {
  it("ends when its key is rolled: the rolled key's holder sees none of the events that follow", async () => {
    const account = await t.app.services.accounts.create('Rolled key')
    const stream = open(account.sk_test_key)
    const res = await stream.response
    expect(res.status).toBe(200)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const newKey = await t.app.services.accounts.rollKey(account.id, 'secret', false)
    expect((await client(t.app, account.sk_test_key).get('/v2/me')).status).toBe(401)
    const sk = client(t.app, newKey)
    const src = await sk.post('/v2/sources/', cardSource())
    expect((await sk.post('/v2/charges/', { amount: 777, currency: 'usd', source: src.body.id })).status).toBe(201)
    // the stream ends by itself: reading it comes to its end without being aborted
    await Promise.race([
      stream.reading,
      new Promise((_, reject) => setTimeout(() => reject(new Error('still open')), 5000)),
    ])
    expect(stream.messages).toEqual([])
    expect(t.logs.join('')).not.toContain('event stream failed')
  })

  it('sends each new event as a message whose id is the event id and data the event', async () => {
    await charge()
    const stream = open(t.account.sk_test_key)
    const res = await stream.response
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(res.headers.get('request-id')).toMatch(/^req_/)
    await new Promise((r) => setTimeout(r, 150))
    const made = [await charge(501), await charge(502)]
    const [first, second] = await stream.until(2)
    await stream.close()
    expect(stream.messages).toHaveLength(2)
    for (const [i, m] of [first, second].entries()) {
      const event = JSON.parse(m?.data ?? '')
      expect(event).toMatchObject({ object: 'event', type: 'charge.succeeded', livemode: false })
      expect(event.data.object.id).toBe(made[i])
      expect(m?.id).toBe(event.id)
      expect((await t.sk.get(`/v2/events/${event.id}`)).body).toEqual(event)
    }
  })

  it('resumes after Last-Event-ID with every event after it, oldest first, then goes on live', async () => {
    const before = await charge(600)
    const events = (await t.sk.get(`/v2/events/?charge=${before}`)).body.data
    const resumeAfter = events[0].id
    const missed = [await charge(601), await charge(602), await charge(603)]
    const stream = open(t.account.sk_test_key, resumeAfter)
    const resumed = () => stream.messages.filter((m) => (m.id as string) > resumeAfter)
    while (resumed().length < 3) await stream.until(stream.messages.length + 1)
    const live = await charge(604)
    while (resumed().length < 4) await stream.until(stream.messages.length + 1)
    await stream.close()
    expect(resumed().map((m) => JSON.parse(m.data).data.object.id)).toEqual([...missed, live])
    // what comes again from before the resume point is only the few seconds in which a
    // transaction may still have been committing, each event once
    const again = stream.messages.filter((m) => (m.id as string) <= resumeAfter)
    const ids = stream.messages.map((m) => m.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const m of again) expect(Date.now() - Number.parseInt((m.id as string).slice(4, 16), 16)).toBeLessThan(15_000)
  })

  it("on a deterministic account, whose ids carry its clock's time, resumes with the events after Last-Event-ID only", async () => {
    const det = await t.app.services.accounts.create('Replay shop', { seed: 'event-stream-1' })
    const sk = client(t.app, det.sk_test_key)
    for (let i = 0; i < 3; i++) {
      const src = await sk.post('/v2/sources/', cardSource())
      expect((await sk.post('/v2/charges/', { amount: 700 + i, currency: 'usd', source: src.body.id })).status).toBe(
        201,
      )
    }
    const ids = ((await sk.get('/v2/events/?limit=100')).body.data as { id: string }[]).map((e) => e.id).reverse()
    expect(ids.length).toBeGreaterThanOrEqual(3)
    const stream = open(det.sk_test_key, ids[0])
    await stream.until(ids.length - 1)
    // a few polls more: nothing else comes
    await new Promise((resolve) => setTimeout(resolve, 400))
    await stream.close()
    expect(stream.messages.map((m) => m.id)).toEqual(ids.slice(1))
  })

  it('names where a new stream begins, an id with no event, which as Last-Event-ID resumes with what was made after it', async () => {
    await charge(650)
    const newest = (await t.sk.get('/v2/events/?limit=1')).body.data[0].id
    const stream = open(t.account.sk_test_key)
    await stream.response
    const start = await until(() => stream.fields.find((m) => m.id !== undefined))
    await stream.close()
    expect(start).toMatchObject({ id: newest })
    expect(start.data).toBeUndefined()
    expect(stream.messages).toEqual([])
    const during = await charge(651)
    const resumed = open(t.account.sk_test_key, start.id)
    await until(() => resumed.messages.find((m) => JSON.parse(m.data).data.object.id === during))
    await resumed.close()
    expect(
      resumed.messages.filter((m) => (m.id as string) > newest).map((m) => JSON.parse(m.data).data.object.id),
    ).toEqual([during])
  })

  it('on an account with no events yet, names a start that a resumed stream sends every later event after, on a deterministic one too', async () => {
    for (const seed of [undefined, 'event-stream-empty']) {
      const account = await t.app.services.accounts.create('No events yet', seed ? { seed } : undefined)
      const stream = open(account.sk_test_key)
      await stream.response
      const start = await until(() => stream.fields.find((m) => m.id !== undefined))
      await stream.close()
      expect(start.id).toMatch(/^evt_[0-9a-f]{32}$/)
      expect(start.data).toBeUndefined()
      const sk = client(t.app, account.sk_test_key)
      const src = await sk.post('/v2/sources/', cardSource())
      const made = await sk.post('/v2/charges/', { amount: 660, currency: 'usd', source: src.body.id })
      const event = (await sk.get(`/v2/events/?charge=${made.body.id}`)).body.data[0]
      const resumed = open(account.sk_test_key, start.id)
      await resumed.until(1)
      await new Promise((r) => setTimeout(r, 200))
      await resumed.close()
      expect(
        resumed.messages.map((m) => m.id),
        seed,
      ).toEqual([event.id])
    }
  })

  it('refuses a query parameter, charge= too: the stream has no filter', async () => {
    const res = await fetch(`${t.url}/v2/events/stream?charge=ch_x`, {
      headers: { authorization: `Bearer ${t.account.sk_test_key}` },
    })
    expect(res.status).toBe(422)
    expect(await res.json()).toMatchObject({ error: { code: 'parameter_unknown', param: 'charge' } })
  })

  it('sends an event committed after a newer one was sent, once', async () => {
    const stream = open(t.account.sk_test_key)
    await stream.response
    const opened = Date.now()
    await new Promise((r) => setTimeout(r, 300))
    const newer = await charge(700)
    await stream.until(1)
    // an event whose id was made after the stream opened and before the one sent, by a
    // transaction that commits only now
    const id = `evt_${(opened + 100).toString(16).padStart(12, '0')}${'0'.repeat(20)}`
    const late = await t.sk.get(`/v2/charges/${newer}`)
    await insertEvent(
      t.db,
      { accountId: t.account.id, livemode: false },
      { id, type: 'charge.succeeded', chargeId: newer, data: late.body },
    )
    await stream.until(2)
    await new Promise((r) => setTimeout(r, 300))
    await stream.close()
    expect(stream.messages.map((m) => m.id)).toEqual([expect.stringMatching(/^evt_/), id])
  })

  it('shows one mode of one account only', async () => {
    const live = open(t.account.sk_live_key)
    await live.response
    await new Promise((r) => setTimeout(r, 100))
    await charge(800)
    await new Promise((r) => setTimeout(r, 300))
    await live.close()
    expect(live.messages).toEqual([])
  })

  it('answers HEAD with the headers of a stream, and ends', async () => {
    const res = await fetch(`${t.url}/v2/events/stream`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${t.account.sk_test_key}` },
      signal: AbortSignal.timeout(5_000),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(await res.text()).toBe('')
    // and the OpenAPI document says what it answers
    const doc = await (await fetch(`${t.url}/v2/openapi.json`)).json()
    expect(Object.keys(doc.paths['/v2/events/stream'].get.responses['200'].content)).toEqual(['text/event-stream'])
  })

  it('refuses a malformed Last-Event-ID (400) and a request without a key (401) in the error envelope', async () => {
    const bad = await fetch(`${t.url}/v2/events/stream`, {
      headers: { authorization: `Bearer ${t.account.sk_test_key}`, 'last-event-id': 'nope' },
    })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: { code: 'header_invalid', param: 'Last-Event-ID' } })
    const anon = await fetch(`${t.url}/v2/events/stream`)
    expect(anon.status).toBe(401)
  })

  it('ends open streams when the service closes, so that closing does not wait for them', async () => {
    const other = await listeningApp({}, { eventStream: { pollMs: 50 } })
    const res = await fetch(`${other.url}/v2/events/stream`, {
      headers: { authorization: `Bearer ${other.account.sk_test_key}` },
    })
    const reading = (async () => {
      for await (const _ of readStream(res.body as ReadableStream<Uint8Array>)) {
        // none expected
      }
      return 'ended'
    })()
    await other.close()
    expect(await reading).toBe('ended')
  })
})
