import { describe, expect, it } from 'vitest'
import { cardSource, REDIRECT, testApp } from '../helpers/app.js'
import { charge, processor, reversalOwed, reversalsSent, sweep, t, useRemoteProcessor } from './remote-processor.js'

/**
 * Calls to the processor the service never saw answered: failed charges, their reversals at the
 * processor, and the sweep that asks again for those not confirmed (see remote-processor.ts).
 */

useRemoteProcessor()

describe('an authorization the processor never answered', () => {
  for (const mode of ['timeout', 'unavailable', 'fail'] as const) {
    it(`(${mode}) fails the charge and is reversed at the processor at once`, async () => {
      processor.authorizeMode = mode
      const c = await charge()
      expect(c.status).toBe(201)
      expect(c.body.status).toBe('failed')
      expect(c.body.failure_data.code).toBe(mode === 'timeout' ? 'processor_timeout' : 'processor_unavailable')
      expect(c.body.failure_data.next_steps).toMatch(/released/)
      await reversalsSent()
      expect(processor.reversed).toEqual([c.body.id])
      expect(await reversalOwed(c.body.id)).toBe(false)
      // nothing is left for the sweep to send again
      await sweep(c.body.id)
      expect(processor.reversed).toEqual([c.body.id])
    })
  }

  it('is answered without waiting for its reversal, which the store owes until the processor confirms it', async () => {
    processor.authorizeMode = 'timeout'
    processor.holdReversals = true
    // a reversal awaited in the request would hold this answer until released
    const c = await charge()
    expect(c.body).toMatchObject({ status: 'failed', failure_data: { code: 'processor_timeout' } })
    expect(processor.heldReversals).toHaveLength(1)
    expect(processor.reversed).toEqual([])
    expect(await reversalOwed(c.body.id)).toBe(true)
    processor.heldReversals[0]?.()
    await reversalsSent()
    expect(processor.reversed).toEqual([c.body.id])
    expect(await reversalOwed(c.body.id)).toBe(false)
  })

  it('an app that closes waits for the reversals under way rather than cutting them off', async () => {
    processor.authorizeMode = 'timeout'
    processor.holdReversals = true
    const other = await testApp({ testProcessor: processor })
    const src = await other.sk.post('/v2/sources/', cardSource())
    const c = await other.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.body.id })
    expect(c.body.status).toBe('failed')
    expect(processor.heldReversals).toHaveLength(1)
    let closed = false
    const closing = other.app.close().then(() => {
      closed = true
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(closed).toBe(false)
    processor.heldReversals[0]?.()
    await closing
    expect(processor.reversed).toEqual([c.body.id])
    expect(await reversalOwed(c.body.id, other.db)).toBe(false)
    await other.store.close()
  })

  for (const mode of ['timeout', 'decline', 'nonsense', 'crash'] as const) {
    it(`a reversal that is not confirmed (${mode}) is sent again by the recovery sweep until it is`, async () => {
      processor.authorizeMode = 'timeout'
      processor.reverseMode = mode
      const c = await charge()
      expect(c.body.status).toBe('failed')
      await reversalsSent()
      expect(processor.reversed).toEqual([c.body.id])
      expect(await reversalOwed(c.body.id)).toBe(true)

      await sweep(c.body.id)
      expect(processor.reversed).toEqual([c.body.id, c.body.id])
      expect(await reversalOwed(c.body.id)).toBe(true)

      processor.reverseMode = 'answer'
      await sweep(c.body.id)
      expect(processor.reversed).toEqual([c.body.id, c.body.id, c.body.id])
      expect(await reversalOwed(c.body.id)).toBe(false)
      await sweep(c.body.id)
      expect(processor.reversed).toHaveLength(3)
    })
  }

  it('a charge owing its reversal reads as failed to every operation', async () => {
    processor.authorizeMode = 'timeout'
    processor.reverseMode = 'timeout'
    const c = await charge()
    await reversalsSent()
    expect(await reversalOwed(c.body.id)).toBe(true)
    const got = await t.sk.get(`/v2/charges/${c.body.id}`)
    expect(got.body).toMatchObject({ status: 'failed', authorized: false, captured: false })
    const cap = await t.sk.post(`/v2/charges/${c.body.id}/capture`)
    expect(cap.status).toBe(400)
    expect(cap.body.error).toMatchObject({
      code: 'charge_not_capturable',
      message: 'A failed charge cannot be captured',
    })
    const refund = await t.sk.post(`/v2/charges/${c.body.id}/refund`)
    expect(refund.body.error.message).toBe('A failed charge cannot be refunded')
    // its event says failed, once
    const events = (await t.sk.get('/v2/events/?limit=5')).body.data.filter(
      (e: { data: { object: { id: string } } }) => e.data.object.id === c.body.id,
    )
    expect(events.map((e: { type: string }) => e.type)).toEqual(['charge.failed'])
  })

  it("a payer's answer the processor never answered fails the charge and is reversed", async () => {
    const c = await charge({ type: 'wallet_b', redirect: REDIRECT })
    expect(c.body.status).toBe('pending')
    processor.authorizeMode = 'timeout'
    const decided = await t.sk.post(`/v2/test/charges/${c.body.id}/authorize`, { decision: 'approve' })
    expect(decided.body).toMatchObject({ status: 'failed', failure_data: { code: 'processor_timeout' } })
    await reversalsSent()
    expect(processor.reversed).toEqual([c.body.id])
    expect(await reversalOwed(c.body.id)).toBe(false)
  })

  for (const [mode, reason] of [
    ['refuse', /refused the request/],
    ['unreachable', /could not be reached/],
  ] as const) {
    it(`a processor that ${mode === 'refuse' ? 'refused the request (4xx)' : 'was never reached'} did nothing: the charge fails with nothing to reverse`, async () => {
      processor.authorizeMode = mode
      const c = await charge()
      expect(c.body).toMatchObject({ status: 'failed', failure_data: { code: 'processor_unavailable' } })
      expect(c.body.failure_data.reason).toMatch(reason)
      await reversalsSent()
      expect(processor.reversed).toEqual([])
      expect(await reversalOwed(c.body.id)).toBe(false)
    })
  }

  // an earlier call may have reached the processor: a refusal of the later one says nothing of it
  for (const mode of ['refuse', 'unreachable'] as const) {
    it(`an interrupted authorization sent again and met by ${mode} fails the charge and is reversed`, async () => {
      processor.holdFirst = true
      const src = await t.sk.post('/v2/sources/', cardSource())
      const stalled = t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source: src.body.id })
      while (processor.held.size < 1) await new Promise((resolve) => setTimeout(resolve, 10))
      const [id] = [...processor.held.keys()] as [string]
      processor.authorizeMode = mode
      await t.db.query(
        "UPDATE charges SET updated_at = now() - interval '1 hour', processing_since = processing_since - interval '1 hour' WHERE id = $1",
        [id],
      )
      await t.app.services.charges.recoverInterrupted(1000)
      await reversalsSent()
      expect((await t.sk.get(`/v2/charges/${id}`)).body).toMatchObject({
        status: 'failed',
        failure_data: { code: 'processor_unavailable' },
      })
      // the sweep may also ask again a reversal an earlier test left owed, on a slow machine
      expect(processor.reversed.filter((r) => r === id)).toEqual([id])
      for (const release of processor.held.values()) release()
      expect((await stalled).body.status).toBe('failed')
    })

    it(`a payer's answer met by ${mode} fails the charge and reverses the step the processor began`, async () => {
      const c = await charge({ type: 'wallet_b', redirect: REDIRECT })
      expect(c.body.status).toBe('pending')
      processor.authorizeMode = mode
      const decided = await t.sk.post(`/v2/test/charges/${c.body.id}/authorize`, { decision: 'approve' })
      expect(decided.body).toMatchObject({ status: 'failed', failure_data: { code: 'processor_unavailable' } })
      await reversalsSent()
      expect(processor.reversed).toEqual([c.body.id])
    })
  }

  it('a charge whose payer abandoned a step the processor began is reversed when it expires', async () => {
    const c = await charge({ type: 'wallet_b', redirect: REDIRECT })
    expect(c.body.status).toBe('pending')
    await t.db.query(
      "UPDATE charges SET updated_at = now() - interval '1 hour', processing_since = processing_since - interval '1 hour' WHERE id = $1",
      [c.body.id],
    )
    expect(await t.app.services.charges.expireAbandoned(1000)).toBeGreaterThan(0)
    const expired = (await t.sk.get(`/v2/charges/${c.body.id}`)).body
    expect(expired).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
    await reversalsSent()
    expect(processor.reversed).toEqual([c.body.id])
    expect(await reversalOwed(c.body.id)).toBe(false)
  })

  it('an answered decline is not reversed', async () => {
    const c = await charge(cardSource({ number: '4000000000000002' }))
    expect(c.body.status).toBe('failed')
    expect(c.body.failure_data.code).toBe('card_declined')
    await reversalsSent()
    expect(processor.reversed).toEqual([])
  })
})
