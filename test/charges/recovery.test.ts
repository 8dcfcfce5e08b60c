import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, parseConfig } from '../../src/config.js'
import { listenUrlOf } from '../../src/main.js'
import { cardSource, keptKey, REDIRECT, TEST_CARD, type TestApp, testApp } from '../helpers/app.js'

/**
 * What a process killed mid-request leaves behind, made by hand in the store, and what the
 * service does with it: a retry with the same Idempotency-Key finds the work its first attempt
 * did, and the recovery sweep finishes operations nobody retries.
 */
const LISTEN_URL = 'http://pay.example:8080'
let t: TestApp
beforeAll(async () => {
  t = await testApp(
    // what `jackdaw serve` passes when JACKDAW_PUBLIC_URL is unset: the address it listens at
    { listenUrl: LISTEN_URL },
    { recovery: { intervalMs: 100, graceMs: 200, payerTimeoutMs: 60_000 }, idempotencyLeaseSeconds: 1 },
  )
})
afterAll(() => t.close())

/** As if the process died before it recorded the answer to the request with this key. */
async function forgetAnswer(key: string) {
  await t.db.query(
    `UPDATE idempotency_keys SET status_code = NULL, response_body = NULL, locked_until = now() - interval '1 second'
     WHERE key = $1`,
    [keptKey(t, key)],
  )
}

async function waitFor<T>(check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > until) throw new Error('timed out')
    await sleep(50)
  }
}

describe('a create charge whose process died', () => {
  it('is found again by its retry, authorized, and never doubled', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const key = 'crash-create-1'
    const first = await t.sk.post(
      '/v2/charges/',
      { amount: 700, currency: 'usd', source: src.body.id },
      { 'idempotency-key': key },
    )
    expect(first.status).toBe(201)
    // died after recording the charge, before the processor's answer (and the erasure of the
    // card number that goes with it) was recorded
    await t.db.query(
      "UPDATE charges SET status = 'pending', authorized = false, captured = false, processing = 'authorize', processing_since = now(), updated_at = now() WHERE id = $1",
      [first.body.id],
    )
    await t.db.query('UPDATE sources SET card_number_enc = $2 WHERE id = $1', [
      src.body.id,
      t.vault.encrypt(TEST_CARD.number),
    ])
    await forgetAnswer(key)
    const retry = await t.sk.post(
      '/v2/charges/',
      { amount: 700, currency: 'usd', source: src.body.id },
      { 'idempotency-key': key },
    )
    expect(retry.status).toBe(201)
    expect(retry.body.id).toBe(first.body.id)
    expect(retry.body.status).toBe('succeeded')
    const count = await t.db.query('SELECT count(*)::int AS n FROM charges WHERE source_id = $1', [src.body.id])
    expect((count.rows[0] as { n: number }).n).toBe(1)
    // and the answer is kept now: a further retry replays it
    const again = await t.sk.post(
      '/v2/charges/',
      { amount: 700, currency: 'usd', source: src.body.id },
      { 'idempotency-key': key },
    )
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body.id).toBe(first.body.id)
  })

  it('a retry while the first attempt may still run is told to wait', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const key = 'crash-create-2'
    await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.body.id }, { 'idempotency-key': key })
    await t.db.query(
      "UPDATE idempotency_keys SET status_code = NULL, response_body = NULL, locked_until = now() + interval '1 minute' WHERE key = $1",
      [keptKey(t, key)],
    )
    const retry = await t.sk.post(
      '/v2/charges/',
      { amount: 700, currency: 'usd', source: src.body.id },
      { 'idempotency-key': key },
    )
    expect(retry.status).toBe(409)
    expect(retry.body.error.code).toBe('idempotency_key_in_use')
  })
})

describe('the recovery sweep', () => {
  it('finishes a capture, a void and a refund that a dead process left under way', async () => {
    const make = async () => {
      const src = await t.sk.post('/v2/sources/', cardSource())
      return (await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture: false }))
        .body
    }
    const toCapture = await make()
    const toVoid = await make()
    await t.db.query("UPDATE charges SET processing = 'capture:600', processing_since = now() WHERE id = $1", [
      toCapture.id,
    ])
    await t.db.query("UPDATE charges SET processing = 'void', processing_since = now() WHERE id = $1", [toVoid.id])

    const captured = await waitFor(async () => {
      const c = (await t.sk.get(`/v2/charges/${toCapture.id}`)).body
      return c.captured ? c : undefined
    })
    expect(captured).toMatchObject({ status: 'succeeded', captured: true, amount: 600 })
    const voided = await waitFor(async () => {
      const c = (await t.sk.get(`/v2/charges/${toVoid.id}`)).body
      return c.status === 'voided' ? c : undefined
    })
    expect(voided.authorized).toBe(false)

    // a refund recorded and reserved, whose processor call never happened
    const refunded = (await t.sk.post(`/v2/charges/${toCapture.id}/refund`, { amount: 200 })).body
    await t.db.query(
      "UPDATE refunds SET status = 'pending', updated_at = now() - interval '1 minute' WHERE charge_id = $1",
      [toCapture.id],
    )
    const settled = await waitFor(async () => {
      const c = (await t.sk.get(`/v2/charges/${toCapture.id}`)).body
      return c.refunds[0]?.status === 'succeeded' ? c : undefined
    })
    expect(settled.amount_refunded).toBe(refunded.amount_refunded)
    expect(settled.amount_refunded).toBe(200)
  })

  it('lets go of a payer answer that was being processed, so the payer can answer again', async () => {
    const src = await t.sk.post('/v2/sources/', {
      type: 'wallet_c',
      redirect: { success: 'https://a.example/ok', fail: 'https://a.example/no' },
    })
    const c = (await t.sk.post('/v2/charges/', { amount: 900, currency: 'php', source: src.body.id })).body
    await t.db.query("UPDATE charges SET processing = 'authorize', processing_since = now() WHERE id = $1", [c.id])
    const stuck = await t.sk.post(`/v2/test/charges/${c.id}/authorize`, { decision: 'approve' })
    expect(stuck.status).toBe(400)
    await waitFor(async () => {
      const r = await t.db.query('SELECT processing FROM charges WHERE id = $1', [c.id])
      return (r.rows[0] as { processing: string | null }).processing === null ? true : undefined
    })
    const answered = await t.sk.post(`/v2/test/charges/${c.id}/authorize`, { decision: 'approve' })
    expect(answered.body.status).toBe('succeeded')
  })

  it('gives an authorization it finishes a full hosted-page link, with no request to take the address from', async () => {
    const src = await t.sk.post('/v2/sources/', { type: 'wallet_c', redirect: REDIRECT })
    const c = (await t.sk.post('/v2/charges/', { amount: 900, currency: 'php', source: src.body.id })).body
    expect(c.source.action.url.startsWith('http://')).toBe(true)
    // died after recording the charge, before the processor's answer was recorded
    await t.db.query(
      `UPDATE charges SET processing = 'authorize', processing_since = now(), action = NULL, action_token = NULL,
         updated_at = now() - interval '1 minute' WHERE id = $1`,
      [c.id],
    )
    const swept = await waitFor(async () => {
      const r = (await t.sk.get(`/v2/charges/${c.id}`)).body
      return r.source.action ? r : undefined
    })
    const url = new URL(swept.source.action.url)
    expect(`${url.protocol}//${url.host}`).toBe(LISTEN_URL)
    expect(url.pathname).toBe(`/v2/hosted/charges/${c.id}`)
    expect(url.searchParams.get('token')).not.toBe(new URL(c.source.action.url).searchParams.get('token'))
    // the link opens the page
    const page = await t.app.inject({ method: 'GET', url: url.pathname + url.search })
    expect(page.statusCode).toBe(200)
  })
})

describe('idempotency records', () => {
  it('are purged by the sweep 24 hours after they were made; younger ones stay', async () => {
    const old = `purge-old-${Date.now()}`
    const young = `purge-young-${Date.now()}`
    for (const key of [old, young]) {
      const res = await t.sk.post(
        '/v2/customers/',
        { email: `${key}@example.com`, description: 'k' },
        { 'idempotency-key': key },
      )
      expect(res.status).toBe(201)
    }
    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [
      keptKey(t, old),
    ])
    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '23 hours' WHERE key = $1", [
      keptKey(t, young),
    ])
    const kept = async (key: string) =>
      (
        (await t.db.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [keptKey(t, key)]))
          .rows[0] as {
          n: number
        }
      ).n
    await waitFor(async () => ((await kept(old)) === 0 ? true : undefined))
    expect(await kept(young)).toBe(1)
  })
})

describe('a charge whose payer never answers', () => {
  const threeDs = () => ({ ...cardSource({ number: '4000000000003220' }), redirect: REDIRECT })
  const cvcKept = async (sourceId: string) =>
    (
      (await t.db.query('SELECT card_cvc_enc IS NOT NULL AS kept FROM sources WHERE id = $1', [sourceId])).rows[0] as {
        kept: boolean
      }
    ).kept

  it('fails once it has waited the payer timeout, its security code erased; one that has not waits on', async () => {
    const charge = async () => {
      const src = await t.sk.post('/v2/sources/', threeDs())
      const c = (await t.sk.post('/v2/charges/', { amount: 1200, currency: 'usd', source: src.body.id })).body
      expect(c.status).toBe('pending')
      expect(await cvcKept(src.body.id)).toBe(true)
      return c
    }
    const abandoned = await charge()
    const waiting = await charge()
    await t.db.query("UPDATE charges SET updated_at = now() - interval '61 seconds' WHERE id = $1", [abandoned.id])

    const failed = await waitFor(async () => {
      const c = (await t.sk.get(`/v2/charges/${abandoned.id}`)).body
      return c.status === 'failed' ? c : undefined
    })
    expect(failed.failure_data).toMatchObject({ code: 'payment_expired', provider_response: {} })
    expect(failed.failure_data.reason).toMatch(/did not complete the payment within/)
    expect(failed.source.action).toBeUndefined()
    expect(failed.authorized).toBe(false)
    expect(await cvcKept(abandoned.source.id)).toBe(false)

    // the payer comes back too late: the page refuses the answer
    const late = await t.sk.post(`/v2/test/charges/${abandoned.id}/authorize`, { decision: 'approve' })
    expect(late.status).toBe(400)
    expect(late.body.error.code).toBe('charge_not_pending')
    const token = new URL(abandoned.source.action.url).searchParams.get('token')
    const page = await t.app.inject({ method: 'GET', url: `/v2/hosted/charges/${abandoned.id}?token=${token}` })
    expect(page.statusCode).toBe(200)
    expect(page.body).not.toContain('<form')

    // the decision is an event, holding the charge as the API shows it
    const events = (await t.sk.get('/v2/events/?limit=100')).body.data.filter(
      (e: { data: { object: { id: string } } }) => e.data.object.id === abandoned.id,
    )
    expect(events.map((e: { type: string }) => e.type)).toEqual(['charge.failed', 'charge.pending'])
    expect(events[0].data.object).toEqual(failed)

    // sweeps run every 100 ms: the charge that has not waited long stays as it was
    await sleep(500)
    const still = (await t.sk.get(`/v2/charges/${waiting.id}`)).body
    expect(still.status).toBe('pending')
    expect(still.source.action.url).toBe(waiting.source.action.url)
    expect(await cvcKept(waiting.source.id)).toBe(true)
  })
})

describe('an operation that outlasts the grace while its request is still at work', () => {
  // the sweep (every 100 ms, grace 200 ms) takes the operation for interrupted and runs it again
  const slow = { 'jackdaw-test-fault': 'processor_latency=1500' }
  const eventsOf = async (id: string) =>
    (await t.sk.get(`/v2/events/?charge=${id}`)).body.data.map((e: { type: string }) => e.type)

  const authorized = async (amount: number, headers = {}) => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    return t.sk.post('/v2/charges/', { amount, currency: 'usd', source: src.body.id, capture: false }, headers)
  }

  it('an authorization is recorded once: whichever run ends it first, the other answers the charge as recorded', async () => {
    const created = await authorized(1200, slow)
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ status: 'succeeded', authorized: true, captured: false })
    expect(await eventsOf(created.body.id)).toEqual(['charge.succeeded'])
    expect((await t.sk.get(`/v2/charges/${created.body.id}`)).body).toEqual(created.body)
  })

  it('a capture is recorded once', async () => {
    const { id } = (await authorized(1200)).body
    const captured = await t.sk.post(`/v2/charges/${id}/capture`, { amount: 1000 }, slow)
    expect(captured.status).toBe(200)
    expect(captured.body).toMatchObject({ status: 'succeeded', captured: true, amount: 1000 })
    await sleep(300)
    expect(await eventsOf(id)).toEqual(['charge.captured', 'charge.succeeded'])
    expect((await t.sk.get(`/v2/charges/${id}`)).body).toEqual(captured.body)
  })

  it('a void is recorded once', async () => {
    const { id } = (await authorized(900)).body
    const voided = await t.sk.post(`/v2/charges/${id}/void`, {}, slow)
    expect(voided.status).toBe(200)
    expect(voided.body).toMatchObject({ status: 'voided', authorized: false })
    await sleep(300)
    expect(await eventsOf(id)).toEqual(['charge.voided', 'charge.succeeded'])
  })

  it("a payer's answer the sweep let go is still recorded, and once", async () => {
    const src = await t.sk.post('/v2/sources/', cardSource({ number: '4000000000003220' }))
    const pending = (await t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source: src.body.id })).body
    expect(pending.status).toBe('pending')
    const answered = await t.sk.post(`/v2/test/charges/${pending.id}/authorize`, { decision: 'approve' }, slow)
    expect(answered.status).toBe(200)
    expect(answered.body).toMatchObject({ status: 'succeeded', captured: true })
    await sleep(300)
    expect(await eventsOf(pending.id)).toEqual(['charge.succeeded', 'charge.pending'])
  })
})

describe('the listen address `jackdaw serve` gives the sweep', () => {
  it('is the host and port it binds, the machine name for every interface, none for port 0', () => {
    expect(listenUrlOf({ HOST: '127.0.0.1', PORT: 8080 })).toBe('http://127.0.0.1:8080')
    expect(listenUrlOf({ HOST: 'pay.example', PORT: 80 })).toBe('http://pay.example:80')
    expect(listenUrlOf({ HOST: '::1', PORT: 8080 })).toBe('http://[::1]:8080')
    expect(listenUrlOf({ HOST: '0.0.0.0', PORT: 8080 })).toBe(`http://${hostname()}:8080`)
    expect(listenUrlOf({ HOST: '::', PORT: 8080 })).toBe(`http://${hostname()}:8080`)
    expect(listenUrlOf({ HOST: '127.0.0.1', PORT: 0 })).toBeUndefined()
  })
})

describe('JACKDAW_PAYER_TIMEOUT_SECONDS', () => {
  it('is 24 hours unless set; outside 1 s to 30 days or not a whole number it is refused', () => {
    expect(parseConfig({}).JACKDAW_PAYER_TIMEOUT_SECONDS).toBe(86_400)
    expect(parseConfig({ JACKDAW_PAYER_TIMEOUT_SECONDS: '604800' }).JACKDAW_PAYER_TIMEOUT_SECONDS).toBe(604_800)
    for (const bad of ['0', '2592001', '1.5', 'a day']) {
      expect(() => parseConfig({ JACKDAW_PAYER_TIMEOUT_SECONDS: bad })).toThrow(ConfigError)
    }
  })
})
