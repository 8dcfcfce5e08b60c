import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OperationOutcome, Processor } from '../src/processor/processor.js'
import { ProcessorError } from '../src/processor/processor.js'
import { Simulator } from '../src/processor/simulator.js'
import { cardSource, type TestApp, testApp } from './helpers/app.js'

/**
 * A processor that authorizes like the simulator but whose capture, void and refund answer as a
 * test tells it: succeed, decline, time out or fail.
 */
type Mode = 'succeed' | 'decline' | 'timeout' | 'fail' | 'refuse' | 'unreachable'
class FaultyProcessor extends Simulator implements Processor {
  mode: Mode = 'succeed'
  calls = 0
  /** an authorization that breaks with an error of the service's own, not the processor's */
  breakAuthorize = false
  override authorize(req: Parameters<Simulator['authorize']>[0]) {
    if (this.breakAuthorize) throw new Error('a fault of the service')
    return super.authorize(req)
  }
  async #answer(): Promise<OperationOutcome> {
    this.calls++
    if (this.mode === 'timeout') throw new ProcessorError('timeout', 'no answer')
    if (this.mode === 'fail') throw new ProcessorError('failed', 'HTTP 500')
    if (this.mode === 'refuse') throw new ProcessorError('refused', 'HTTP 401')
    if (this.mode === 'unreachable') throw new ProcessorError('unreachable', 'fetch failed (ECONNREFUSED)')
    if (this.mode === 'decline') {
      return {
        outcome: 'declined',
        failure: { code: 'refused', reason: 'The processor refused', next_steps: '', provider_response: {} },
      }
    }
    return { outcome: 'succeeded' }
  }
  override capture() {
    return this.#answer()
  }
  override void() {
    return this.#answer()
  }
  override refund() {
    return this.#answer()
  }
}

const processor = new FaultyProcessor()
let t: TestApp
beforeAll(async () => {
  t = await testApp({ testProcessor: processor })
})
afterAll(() => t.close())

/** A pass of the recovery sweep, as if its grace period had passed since the charge last moved. */
async function sweep(id: string): Promise<void> {
  await t.db.query("UPDATE charges SET updated_at = updated_at - interval '1 hour' WHERE id = $1", [id])
  await t.app.services.charges.recoverInterrupted(1000).catch(() => {})
}

/** The types of a charge's events, newest first. */
async function eventTypes(id: string): Promise<string[]> {
  const events = (await t.sk.get('/v2/events/?limit=20')).body.data
  return events
    .filter((e: { data: { object: { id: string } } }) => e.data.object.id === id)
    .map((e: { type: string }) => e.type)
}

async function authorized(capture = false) {
  processor.mode = 'succeed'
  const src = await t.sk.post('/v2/sources/', cardSource())
  const c = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture })
  expect(c.body.status).toBe('succeeded')
  return c.body
}

describe('capture and void when the processor misbehaves', () => {
  const expected = {
    decline: { status: 400, code: 'processor_declined', type: 'card_error' },
    timeout: { status: 502, code: 'processor_error', type: 'api_error' },
    fail: { status: 502, code: 'processor_error', type: 'api_error' },
  } as const
  const didNothing = {
    refuse: /refused the capture request; nothing changed/,
    unreachable: /could not be reached for the capture; nothing changed/,
  }
  for (const mode of ['decline', 'refuse', 'unreachable'] as const) {
    it(`${mode}: the charge is left as it was and a later capture succeeds`, async () => {
      const c = await authorized()
      processor.mode = mode
      const status = mode === 'decline' ? 400 : 502
      const cap = await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 })
      expect(cap.status).toBe(status)
      expect(cap.body.error).toMatchObject(
        mode === 'decline'
          ? { code: 'processor_declined', type: 'card_error' }
          : { code: 'processor_error', type: 'api_error', message: expect.stringMatching(didNothing[mode]) },
      )
      const v = await t.sk.post(`/v2/charges/${c.id}/void`)
      expect(v.status).toBe(status)
      const now = (await t.sk.get(`/v2/charges/${c.id}`)).body
      expect(now).toMatchObject({ status: 'succeeded', authorized: true, captured: false, amount: 1000 })
      processor.mode = 'succeed'
      expect((await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 })).body).toMatchObject({
        captured: true,
        amount: 400,
      })
    })
  }

  it('a capture sent again and refused or not reached stays under way: the first call may have captured', async () => {
    const c = await authorized()
    processor.mode = 'timeout'
    expect((await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 })).status).toBe(502)
    for (const mode of ['unreachable', 'refuse'] as const) {
      processor.mode = mode
      await sweep(c.id)
      expect((await t.sk.post(`/v2/charges/${c.id}/void`)).body.error.code).toBe('charge_not_voidable')
      expect((await t.sk.get(`/v2/charges/${c.id}`)).body).toMatchObject({ captured: false, status: 'succeeded' })
    }
    processor.mode = 'succeed'
    processor.calls = 0
    await sweep(c.id)
    expect(processor.calls).toBe(1)
    expect((await t.sk.get(`/v2/charges/${c.id}`)).body).toMatchObject({ captured: true, amount: 400 })
    expect(await eventTypes(c.id)).toEqual(['charge.captured', 'charge.succeeded'])
  })

  // the processor may have captured or voided all the same: the operation stays under way and is
  // sent again until it is answered, never let go as if nothing had happened
  for (const mode of ['timeout', 'fail'] as const) {
    it(`a capture given no answer (${mode}) stays under way until the recovery sweep has it answered`, async () => {
      const c = await authorized()
      processor.mode = mode
      const cap = await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 })
      expect(cap.status).toBe(502)
      expect(cap.body.error).toMatchObject({
        code: 'processor_error',
        type: 'api_error',
        message: expect.stringMatching(/sent again/),
      })
      // nothing else starts on the charge meanwhile
      const v = await t.sk.post(`/v2/charges/${c.id}/void`)
      expect(v.body.error).toMatchObject({
        code: 'charge_not_voidable',
        message: 'A capturing charge cannot be voided',
      })
      const again = await t.sk.post(`/v2/charges/${c.id}/capture`)
      expect(again.body.error.code).toBe('charge_not_capturable')
      expect((await t.sk.get(`/v2/charges/${c.id}`)).body).toMatchObject({ captured: false, amount: 1000 })

      // still no answer: still under way
      await sweep(c.id)
      expect((await t.sk.get(`/v2/charges/${c.id}`)).body.captured).toBe(false)
      expect((await t.sk.post(`/v2/charges/${c.id}/void`)).status).toBe(400)

      processor.mode = 'succeed'
      const calls = processor.calls
      await sweep(c.id)
      expect(processor.calls).toBe(calls + 1)
      expect((await t.sk.get(`/v2/charges/${c.id}`)).body).toMatchObject({ captured: true, amount: 400 })
      expect(await eventTypes(c.id)).toEqual(['charge.captured', 'charge.succeeded'])
      await sweep(c.id)
      expect(processor.calls).toBe(calls + 1)
    })

    it(`a void given no answer (${mode}) stays under way until the recovery sweep has it answered`, async () => {
      const c = await authorized()
      processor.mode = mode
      const v = await t.sk.post(`/v2/charges/${c.id}/void`)
      expect(v.status).toBe(502)
      expect((await t.sk.post(`/v2/charges/${c.id}/capture`)).body.error.code).toBe('charge_not_capturable')
      processor.mode = 'succeed'
      await sweep(c.id)
      expect((await t.sk.get(`/v2/charges/${c.id}`)).body).toMatchObject({ status: 'voided', authorized: false })
      expect(await eventTypes(c.id)).toEqual(['charge.voided', 'charge.succeeded'])
    })
  }

  for (const mode of ['decline', 'timeout', 'fail'] as const) {
    // a refusal is an answer and is kept for its key, as a declined charge is; a processor's
    // fault is not, so the same key runs the operation again
    it(`after a ${mode}, a retry with a key that was not given an answer runs the operation again`, async () => {
      const c = await authorized()
      const firstKey = { 'idempotency-key': `first-${mode}-${c.id}` }
      const key = mode === 'decline' ? { 'idempotency-key': `retry-${mode}-${c.id}` } : firstKey
      processor.mode = mode
      const calls = processor.calls
      const first = await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 }, firstKey)
      expect(first.status).toBe(expected[mode].status)
      processor.mode = 'succeed'
      if (mode === 'decline') {
        const replayed = await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 }, firstKey)
        expect(replayed.headers['idempotent-replayed']).toBe('true')
        expect(replayed.body.error.code).toBe('processor_declined')
      }
      const retry = await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 }, key)
      expect(retry.status).toBe(200)
      expect(retry.body).toMatchObject({ captured: true, amount: 400 })
      expect(processor.calls).toBe(calls + 2)
      // the answer now kept for the key is the capture's
      const replay = await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 }, key)
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(replay.body).toMatchObject({ captured: true, amount: 400 })

      const d = await authorized()
      const voidKey = { 'idempotency-key': `retry-void-${mode}-${d.id}` }
      processor.mode = mode
      expect((await t.sk.post(`/v2/charges/${d.id}/void`, {}, voidKey)).status).toBe(expected[mode].status)
      processor.mode = 'succeed'
      const voided = await t.sk.post(
        `/v2/charges/${d.id}/void`,
        {},
        mode === 'decline' ? { 'idempotency-key': `again-${d.id}` } : voidKey,
      )
      expect(voided.status).toBe(200)
      expect(voided.body).toMatchObject({ status: 'voided', authorized: false })
    })
  }
})

describe('after a fault of the service released an Idempotency-Key', () => {
  it('a retry of a create with the key but another body is 409 and never resumes the first charge', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const key = { 'idempotency-key': `broken-create-${src.body.id}` }
    processor.breakAuthorize = true
    try {
      const first = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.body.id }, key)
      expect(first.status).toBe(500)
    } finally {
      processor.breakAuthorize = false
    }
    const other = await t.sk.post('/v2/charges/', { amount: 900, currency: 'usd', source: src.body.id }, key)
    expect(other.status, other.text).toBe(409)
    expect(other.body.error.code).toBe('idempotency_key_reused')
    const elsewhere = await t.sk.post('/v2/customers/', { email: 'k@example.com', description: 'k' }, key)
    expect(elsewhere.status).toBe(409)
    // the same request again is the retry it was: it finishes the charge the first attempt made
    const retry = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.body.id }, key)
    expect(retry.status, retry.text).toBe(201)
    expect(retry.body).toMatchObject({ amount: 700, status: 'succeeded' })
  })

  it('a retry of a capture with the key but another amount or operation is 409 and resumes nothing', async () => {
    const c = await authorized()
    const key = { 'idempotency-key': `broken-capture-${c.id}` }
    processor.mode = 'fail'
    expect((await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 400 }, key)).status).toBe(502)
    processor.mode = 'succeed'
    const calls = processor.calls
    const other = await t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 300 }, key)
    expect(other.status, other.text).toBe(409)
    expect(other.body.error.code).toBe('idempotency_key_reused')
    expect((await t.sk.post(`/v2/charges/${c.id}/void`, {}, key)).status).toBe(409)
    expect(processor.calls).toBe(calls)
    expect((await t.sk.get(`/v2/charges/${c.id}`)).body.captured).toBe(false)
  })
})

describe('refunds when the processor misbehaves', () => {
  it('a declined refund is recorded failed and its amount given back', async () => {
    const c = await authorized(true)
    processor.mode = 'decline'
    const r = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 300 })
    expect(r.status).toBe(200)
    expect(r.body.refunds).toHaveLength(1)
    expect(r.body.refunds[0].status).toBe('failed')
    expect(r.body.amount_refunded).toBe(0)
    expect(r.body.status).toBe('succeeded')
    processor.mode = 'succeed'
    const full = await t.sk.post(`/v2/charges/${c.id}/refund`)
    expect(full.body).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
  })

  it('a refund whose answer never came stays pending, reserved, and is asked again by the sweep', async () => {
    const c = await authorized(true)
    processor.mode = 'timeout'
    const r = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 1000 })
    expect(r.status).toBe(200)
    expect(r.body.refunds[0].status).toBe('pending')
    // the reservation holds: nothing more can be refunded meanwhile; the status changes, with
    // its event, when the processor has answered
    expect(r.body).toMatchObject({ amount_refunded: 1000, status: 'succeeded' })
    const newest = (await t.sk.get('/v2/events/?limit=1')).body.data[0]
    expect(newest).toMatchObject({ type: 'charge.succeeded', data: { object: { id: c.id } } })
    const more = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 1 })
    expect(more.body.error.code).toBe('charge_not_refundable')
    processor.mode = 'succeed'
    await t.db.query("UPDATE refunds SET updated_at = now() - interval '1 hour' WHERE charge_id = $1", [c.id])
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThan(0)
    const done = (await t.sk.get(`/v2/charges/${c.id}`)).body
    expect(done.refunds[0].status).toBe('succeeded')
    expect(done).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
  })

  it('a pending refund of all that was left that then fails gives its amount back', async () => {
    const c = await authorized(true)
    await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 250 })
    processor.mode = 'timeout'
    const r = await t.sk.post(`/v2/charges/${c.id}/refund`)
    expect(r.body).toMatchObject({ status: 'succeeded', amount_refunded: 1000 })
    expect(r.body.refunds.map((x: { status: string }) => x.status)).toEqual(['succeeded', 'pending'])
    processor.mode = 'decline'
    await t.db.query(
      "UPDATE refunds SET updated_at = now() - interval '1 hour' WHERE charge_id = $1 AND status = 'pending'",
      [c.id],
    )
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThan(0)
    const done = (await t.sk.get(`/v2/charges/${c.id}`)).body
    expect(done).toMatchObject({ status: 'succeeded', amount_refunded: 250 })
    expect(done.refunds.map((x: { status: string }) => x.status)).toEqual(['succeeded', 'failed'])
    processor.mode = 'succeed'
  })

  it('when the last of concurrent refunds fails, a refunded charge goes back to succeeded', async () => {
    const c = await authorized(true)
    processor.mode = 'succeed'
    await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 600 })
    processor.mode = 'decline'
    const failed = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 400 })
    expect(failed.body).toMatchObject({ status: 'succeeded', amount_refunded: 600 })
  })
})

describe('the security code', () => {
  it('is kept encrypted until the authorization is decided, then erased', async () => {
    processor.mode = 'succeed'
    const src = await t.sk.post('/v2/sources/', cardSource({ number: '4000000000003220' }))
    const stored = async () =>
      (await t.db.query('SELECT card_cvc_enc FROM sources WHERE id = $1', [src.body.id])).rows[0] as {
        card_cvc_enc: string | null
      }
    expect((await stored()).card_cvc_enc).toMatch(/^v1:/)
    const c = await t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id })
    expect(c.body.status).toBe('pending')
    // 3-D Secure is still open: the code is needed for the authorization that follows
    expect((await stored()).card_cvc_enc).toMatch(/^v1:/)
    const ok = await t.sk.post(`/v2/test/charges/${c.body.id}/authorize`, { decision: 'approve' })
    expect(ok.body.status).toBe('succeeded')
    expect(ok.body.source.card.cvc_checked).toBe('pass')
    expect((await stored()).card_cvc_enc).toBeNull()
  })
})

describe('the reference page', () => {
  it('is served as HTML without a key, beside the OpenAPI document', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/v2/docs/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/text\/html/)
    const doc = await t.anon.get('/v2/openapi.json')
    expect(doc.status).toBe(200)
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/v2/charges/', '/v2/customers/{cus_id}', '/v2/sources/']),
    )
  })

  it('says which bodies may be left out, and names Idempotency-Key and Request-Id', async () => {
    const { paths } = (await t.anon.get('/v2/openapi.json')).body
    for (const op of ['capture', 'void', 'refund']) {
      expect(paths[`/v2/charges/{ch_id}/${op}`].post.requestBody.required).toBe(false)
    }
    expect(paths['/v2/charges/'].post.requestBody.required).toBe(true)
    expect(paths['/v2/charges/{ch_id}/verify'].post.requestBody.required).toBe(true)
    const idempotencyKey = (op: { parameters?: { in: string; name: string }[] }) =>
      op.parameters?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key')
    expect(idempotencyKey(paths['/v2/charges/'].post)).toBeDefined()
    expect(idempotencyKey(paths['/v2/sources/'].post)).toBeDefined()
    expect(idempotencyKey(paths['/v2/charges/'].get)).toBeUndefined()
    expect(paths['/v2/customers/{cus_id}'].get.responses['200'].headers['Request-Id']).toBeDefined()
    // and a capture with no body at all is taken, as the document now says
    const c = await authorized()
    const res = await t.app.inject({
      method: 'POST',
      url: `/v2/charges/${c.id}/capture`,
      headers: { authorization: `Bearer ${t.account.sk_test_key}` },
    })
    expect(res.statusCode).toBe(200)
  })
})
