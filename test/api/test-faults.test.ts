import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type Json, keptKey } from '../helpers/app.js'
import { type ListeningApp, listeningApp } from '../helpers/listening.js'

let t: ListeningApp
beforeAll(async () => {
  t = await listeningApp()
})
afterAll(() => t.close())

const FAULT = 'Jackdaw-Test-Fault'

/** How many rows of a table the account has. */
async function rows(table: 'charges' | 'sources' | 'events' | 'idempotency_keys'): Promise<number> {
  const res = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [
    t.account.id,
  ])
  return Number(res.rows[0]?.n)
}

async function chargeRow(id: string): Promise<Json> {
  const res = await t.db.query(
    'SELECT status, captured, processing, failure_data, reversal_asked_at FROM charges WHERE id = $1',
    [id],
  )
  return res.rows[0]
}

async function source(): Promise<string> {
  const src = await t.sk.post('/v2/sources/', cardSource())
  expect(src.status).toBe(200)
  return src.body.id
}

const charge = async (headers: Record<string, string> = {}, capture = true) =>
  t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source: await source(), capture }, headers)

describe('the Jackdaw-Test-Fault header', () => {
  it('is refused with a live key (400 test_mode_only), and nothing is written', async () => {
    const before = await rows('sources')
    const res = await t.skLive.post('/v2/sources/', cardSource(), { [FAULT]: 'processor_timeout' })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ code: 'test_mode_only', param: FAULT })
    expect(await rows('sources')).toBe(before)
  })

  it.each([
    ['processor_slow'],
    [''],
    ['processor_latency'],
    ['processor_latency=30001'],
    ['processor_latency=-1'],
    ['processor_latency=1.5'],
    ['processor_latency=abc'],
    ['lost_response=1'],
  ])('refuses %j with 400 header_invalid naming the header, before anything is written', async (value) => {
    const before = await rows('sources')
    const res = await t.sk.post('/v2/sources/', cardSource(), { [FAULT]: value, 'Idempotency-Key': `bad-${value}` })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'header_invalid', param: FAULT })
    expect(res.body.error.message).toContain(FAULT)
    expect(await rows('sources')).toBe(before)
    // the key was not used up: the same request without the fault runs
    expect((await t.sk.post('/v2/sources/', cardSource(), { 'Idempotency-Key': `bad-${value}` })).status).toBe(200)
  })

  for (const [fault, kind] of [
    ['processor_timeout', 'timeout'],
    ['processor_unavailable', 'unavailable'],
  ] as const) {
    it(`${fault}: the charge fails as after a real ${kind}, with nothing held to reverse, for that request only`, async () => {
      const c = await charge({ [FAULT]: fault })
      expect(c.status).toBe(201)
      expect(c.body).toMatchObject({ status: 'failed', authorized: false, captured: false })
      expect(c.body.failure_data).toMatchObject({ code: fault, provider_response: { error: kind } })
      const stored = await chargeRow(c.body.id)
      expect(stored).toMatchObject({ status: 'failed', processing: null, reversal_asked_at: null })
      expect(stored.failure_data.code).toBe(fault)
      const events = await t.db.query('SELECT type FROM events WHERE charge_id = $1', [c.body.id])
      expect(events.rows.map((e) => e.type)).toEqual(['charge.failed'])
      // the next request has no fault
      expect((await charge()).body.status).toBe('succeeded')
    })
  }

  it('processor_timeout on a capture leaves it under way, and a retry with its key captures', async () => {
    const c = await charge({}, false)
    expect(c.body).toMatchObject({ status: 'succeeded', captured: false })
    const key = { 'Idempotency-Key': `capture-${c.body.id}` }
    const cap = await t.sk.post(`/v2/charges/${c.body.id}/capture`, {}, { ...key, [FAULT]: 'processor_timeout' })
    expect(cap.status).toBe(502)
    expect(cap.body.error.code).toBe('processor_error')
    expect(await chargeRow(c.body.id)).toMatchObject({ captured: false, processing: 'capture:1500' })
    const again = await t.sk.post(`/v2/charges/${c.body.id}/capture`, {}, key)
    expect(again.status).toBe(200)
    expect(again.body.captured).toBe(true)
    expect(await chargeRow(c.body.id)).toMatchObject({ captured: true, processing: null })
  })

  it('processor_timeout on a refund: a 200 with the refund pending and its amount held', async () => {
    const c = await charge()
    const res = await t.sk.post(`/v2/charges/${c.body.id}/refund`, {}, { [FAULT]: 'processor_timeout' })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ status: 'succeeded', amount_refunded: 1500 })
    expect(res.body.refunds).toHaveLength(1)
    expect(res.body.refunds[0]).toMatchObject({ status: 'pending', amount: 1500 })
    // held: nothing more can be refunded while it is pending
    const more = await t.sk.post(`/v2/charges/${c.body.id}/refund`, { amount: 100 })
    expect(more.status).toBe(400)
    expect(more.body.error.code).toBe('charge_not_refundable')
    const events = await t.db.query('SELECT type FROM events WHERE charge_id = $1', [c.body.id])
    expect(events.rows.map((e) => e.type)).toEqual(['charge.succeeded'])
  })

  it('processor_unavailable on a void: 502 processor_error, left under way; a retry with its key voids', async () => {
    const c = await charge({}, false)
    const key = { 'Idempotency-Key': `void-${c.body.id}` }
    const res = await t.sk.post(`/v2/charges/${c.body.id}/void`, {}, { ...key, [FAULT]: 'processor_unavailable' })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('processor_error')
    expect(await chargeRow(c.body.id)).toMatchObject({ status: 'succeeded', captured: false, processing: 'void' })
    const again = await t.sk.post(`/v2/charges/${c.body.id}/void`, {}, key)
    expect(again.status, again.text).toBe(200)
    expect(again.body.status).toBe('voided')
    expect(await chargeRow(c.body.id)).toMatchObject({ status: 'voided', processing: null })
  })

  it('a processor fault on an operation that calls no processor changes nothing', async () => {
    for (const fault of ['processor_timeout', 'processor_unavailable']) {
      const cus = await t.sk.post(
        '/v2/customers/',
        { email: 'ann@example.com', description: 'Ann' },
        { [FAULT]: fault },
      )
      expect(cus.status, cus.text).toBe(201)
      expect((await t.sk.get(`/v2/customers/${cus.body.id}`)).body.email).toBe('ann@example.com')
      const src = await t.sk.post('/v2/sources/', cardSource(), { [FAULT]: fault })
      expect(src.status, src.text).toBe(200)
      expect((await t.sk.get(`/v2/sources/${src.body.id}`)).body.used).toBe(false)
      // and the source charges as any other
      expect((await t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id })).body.status).toBe(
        'succeeded',
      )
    }
  })

  it('processor_latency=<ms> holds the processor call that long, then answers as usual', async () => {
    const started = Date.now()
    const c = await charge({ [FAULT]: 'processor_latency=400' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(400)
    expect(c.status).toBe(201)
    expect(c.body.status).toBe('succeeded')
    expect((await chargeRow(c.body.id)).status).toBe('succeeded')
    expect((await charge({ [FAULT]: 'processor_latency=0' })).body.status).toBe('succeeded')
  })

  it('lost_response: the charge is made, the connection closes unanswered, and a retry with its key finds it', async () => {
    const src = await source()
    const body = JSON.stringify({ amount: 2500, currency: 'usd', source: src })
    const before = await rows('charges')
    const headers = {
      authorization: `Basic ${Buffer.from(`${t.account.sk_test_key}:`).toString('base64')}`,
      'content-type': 'application/json',
      'idempotency-key': `lost-${src}`,
    }
    const lost = await fetch(`${t.url}/v2/charges/`, {
      method: 'POST',
      body,
      headers: { ...headers, [FAULT]: 'lost_response' },
    })
      .then((res) => res.status)
      .catch((err: Error) => err)
    expect(lost).toBeInstanceOf(Error)
    expect(await rows('charges')).toBe(before + 1)

    const retry = await fetch(`${t.url}/v2/charges/`, { method: 'POST', body, headers })
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    const found = (await retry.json()) as Json
    expect(found).toMatchObject({ status: 'succeeded', amount: 2500 })
    const stored = await t.db.query('SELECT id FROM charges WHERE source_id = $1', [src])
    expect(stored.rows).toEqual([{ id: found.id }])
    expect(await rows('charges')).toBe(before + 1)
  })

  it('error_before_commit: a 500 and nothing written; a retry with the same key runs afresh', async () => {
    const counts = async () => [await rows('sources'), await rows('charges'), await rows('events')]
    const before = await counts()
    const key = { 'Idempotency-Key': 'error-before-commit' }
    const res = await t.sk.post('/v2/sources/', cardSource(), { ...key, [FAULT]: 'error_before_commit' })
    expect(res.status).toBe(500)
    expect(res.body.error).toMatchObject({ type: 'api_error', code: 'internal_error' })
    expect(await counts()).toEqual(before)
    // the key holds no answer to give again
    const kept = await t.db.query('SELECT status_code, response_body FROM idempotency_keys WHERE key = $1', [
      keptKey(t, 'error-before-commit'),
    ])
    expect(kept.rows).toHaveLength(1)
    expect(kept.rows.every((r) => r.status_code === null && r.response_body === null)).toBe(true)

    const retry = await t.sk.post('/v2/sources/', cardSource(), key)
    expect(retry.status).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    const [sources, ...rest] = await counts()
    expect([sources, ...rest]).toEqual([(before[0] as number) + 1, before[1], before[2]])
  })

  it('rate_limited: a 429 with Retry-After, nothing written, and the key left free', async () => {
    const before = await rows('sources')
    const key = { 'Idempotency-Key': 'rate-limited' }
    const res = await t.sk.post('/v2/sources/', cardSource(), { ...key, [FAULT]: 'rate_limited' })
    expect(res.status).toBe(429)
    expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
    expect(res.headers['retry-after']).toBe('1')
    expect(await rows('sources')).toBe(before)
    const retry = await t.sk.post('/v2/sources/', cardSource(), key)
    expect(retry.status).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    expect(await rows('sources')).toBe(before + 1)
  })
})
