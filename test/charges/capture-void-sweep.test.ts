import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OperationOutcome, ProcessorError } from '../../src/processor/processor.js'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, type Json, type TestApp, testApp } from '../helpers/app.js'

/**
 * A capture or void whose processor call outlasts the recovery grace is sent again by the sweep
 * while the first call is still out. Whichever call the processor answers first, the operation is
 * recorded once, and the request that began it answers it done (as its Idempotency-Key then
 * replays). The processor here holds each capture and void call until the test lets it answer.
 */
class GatedProcessor extends Simulator {
  gates: Array<() => void> = []
  calls = 0
  gated = false
  timeoutNext = false
  async #answer(): Promise<OperationOutcome> {
    this.calls++
    if (this.timeoutNext) {
      this.timeoutNext = false
      throw new ProcessorError('timeout', 'no answer')
    }
    if (this.gated) await new Promise<void>((resolve) => this.gates.push(resolve))
    return { outcome: 'succeeded' }
  }
  override capture() {
    return this.#answer()
  }
  override void() {
    return this.#answer()
  }
}

const processor = new GatedProcessor()
let t: TestApp
beforeAll(async () => {
  t = await testApp({ testProcessor: processor })
})
afterAll(() => t.close())

async function authorized(): Promise<Json> {
  processor.gated = false
  const src = await t.sk.post('/v2/sources/', cardSource())
  const c = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture: false })
  expect(c.body.status).toBe('succeeded')
  return c.body
}

async function until(check: () => boolean) {
  for (let i = 0; i < 200 && !check(); i++) await sleep(10)
  expect(check()).toBe(true)
}

describe('a capture or void that the recovery sweep sends again while the first call is still out', () => {
  for (const op of ['capture', 'void'] as const) {
    it(`a ${op} whose processor answered succeeded answers 200 with the ${op} done`, async () => {
      const c = await authorized()
      processor.gated = true
      processor.calls = 0
      processor.gates = []
      const request = t.sk.post(`/v2/charges/${c.id}/${op}`, {}, { 'idempotency-key': `race-${op}-${c.id}` })
      await until(() => processor.calls === 1)
      // the call outlasts the grace: the sweep claims the operation and sends it again
      await t.db.query("UPDATE charges SET processing_since = processing_since - interval '1 hour' WHERE id = $1", [
        c.id,
      ])
      const sweep = t.app.services.charges.recoverInterrupted(1000).catch(() => 0)
      await until(() => processor.calls === 2)
      // the request's own call answers first: the processor has done the operation
      processor.gates[0]?.()
      const res = await request
      processor.gates[1]?.()
      await sweep
      expect(res.status).toBe(200)
      const stored = (await t.sk.get(`/v2/charges/${c.id}`)).body
      expect(stored).toMatchObject(op === 'capture' ? { captured: true } : { status: 'voided' })
      // the 200 the client got (and that its Idempotency-Key replays) says the operation was done
      expect(res.body).toMatchObject(op === 'capture' ? { captured: true } : { status: 'voided' })
      const replay = await t.sk.post(`/v2/charges/${c.id}/${op}`, {}, { 'idempotency-key': `race-${op}-${c.id}` })
      expect(replay.body).toMatchObject(op === 'capture' ? { captured: true } : { status: 'voided' })
      const events = (await t.sk.get(`/v2/events/?charge=${c.id}`)).body.data.map((e: Json) => e.type)
      expect(events).toEqual([op === 'capture' ? 'charge.captured' : 'charge.voided', 'charge.succeeded'])
    })
  }

  it('a retry (same Idempotency-Key) of a capture that timed out, racing the sweep, answers the capture done', async () => {
    const c = await authorized()
    const key = `retry-${c.id}`
    processor.timeoutNext = true
    const first = await t.sk.post(`/v2/charges/${c.id}/capture`, {}, { 'idempotency-key': key })
    expect(first.status).toBe(502)
    // the grace has passed since the capture began: the client retries as the sweep comes round
    await t.db.query("UPDATE charges SET processing_since = processing_since - interval '1 hour' WHERE id = $1", [c.id])
    processor.gated = true
    processor.calls = 0
    processor.gates = []
    const retry = t.sk.post(`/v2/charges/${c.id}/capture`, {}, { 'idempotency-key': key })
    await until(() => processor.calls === 1)
    const sweep = t.app.services.charges.recoverInterrupted(1000).catch(() => 0)
    await until(() => processor.calls === 2)
    processor.gates[0]?.()
    const res = await retry
    processor.gates[1]?.()
    await sweep
    expect((await t.sk.get(`/v2/charges/${c.id}`)).body.captured).toBe(true)
    expect(res.status).toBe(200)
    expect(res.body.captured).toBe(true)
    const events = (await t.sk.get(`/v2/events/?charge=${c.id}`)).body.data.map((e: Json) => e.type)
    expect(events).toEqual(['charge.captured', 'charge.succeeded'])
  })
})
