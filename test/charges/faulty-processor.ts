import { afterAll, beforeAll, expect } from 'vitest'
import type { OperationOutcome, Processor } from '../../src/processor/processor.js'
import { ProcessorError } from '../../src/processor/processor.js'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, type TestApp, testApp } from '../helpers/app.js'

/**
 * What the tests of a misbehaving processor share (processor-fault*.test.ts): a processor whose
 * answers a test sets, an app on it, and the steps that read what the charge went through.
 */

/**
 * A processor that authorizes like the simulator but whose capture, void and refund answer as a
 * test tells it: succeed, decline, time out or fail.
 */
type Mode = 'succeed' | 'decline' | 'timeout' | 'fail' | 'refuse' | 'unreachable'
export class FaultyProcessor extends Simulator implements Processor {
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

export const processor = new FaultyProcessor()
export let t: TestApp

/** One app on the faulty processor for the file. */
export function useFaultyProcessor(): void {
  beforeAll(async () => {
    t = await testApp({ testProcessor: processor })
  })
  afterAll(() => t.close())
}

/** A pass of the recovery sweep, as if its grace period had passed since the charge last moved. */
export async function sweep(id: string): Promise<void> {
  await t.db.query(
    "UPDATE charges SET updated_at = updated_at - interval '1 hour', processing_since = processing_since - interval '1 hour' WHERE id = $1",
    [id],
  )
  await t.app.services.charges.recoverInterrupted(1000).catch(() => {})
}

/** The types of a charge's events, newest first. */
export async function eventTypes(id: string): Promise<string[]> {
  const events = (await t.sk.get('/v2/events/?limit=20')).body.data
  return events
    .filter((e: { data: { object: { id: string } } }) => e.data.object.id === id)
    .map((e: { type: string }) => e.type)
}

export async function authorized(capture = false) {
  processor.mode = 'succeed'
  const src = await t.sk.post('/v2/sources/', cardSource())
  const c = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture })
  expect(c.body.status).toBe('succeeded')
  return c.body
}
