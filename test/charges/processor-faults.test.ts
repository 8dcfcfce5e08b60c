import { describe, expect, it } from 'vitest'
import { cardSource } from '../helpers/app.js'
import { authorized, eventTypes, processor, sweep, t, useFaultyProcessor } from './faulty-processor.js'

/**
 * Capture and void when the processor declines, refuses, is not reached or gives no answer, and
 * the retries with an Idempotency-Key that follow (see faulty-processor.ts).
 */

useFaultyProcessor()

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
