import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest'
import type { AuthorizeOutcome, OperationOutcome, PaymentRequest, Processor } from '../../src/processor/processor.js'
import { ProcessorError } from '../../src/processor/processor.js'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, type TestApp, testApp } from '../helpers/app.js'

/**
 * What the tests of unanswered processor calls share (unanswered-*.test.ts): a processor that
 * leaves calls unanswered when told, an app on it, and the readings of the reversals owed.
 */

/**
 * A processor reached over a network, as a live one is: it may have acted on a request it never
 * answered. It authorizes like the simulator unless told to leave authorizations or payers'
 * answers unanswered, and records every reversal asked of it.
 */
type Answer =
  | 'answer'
  | 'timeout'
  | 'unavailable'
  | 'fail'
  | 'refuse'
  | 'unreachable'
  | 'decline'
  | 'nonsense'
  | 'crash'
export class RemoteProcessor extends Simulator {
  override readonly decidesInProcess = false
  authorizeMode: Answer = 'answer'
  reverseMode: Answer = 'answer'
  reversed: string[] = []
  /** how long each authorization and reversal takes to answer, and the most at once so far */
  delayMs = 0
  inFlight = 0
  mostInFlight = 0
  /** the first authorization of each charge, and of each refund, waits until released, as one whose process died */
  holdFirst = false
  held = new Map<string, () => void>()
  /** reversals wait until released, one after another, as a processor slow to answer them */
  holdReversals = false
  heldReversals: (() => void)[] = []

  async #taking<T>(call: () => Promise<T>): Promise<T> {
    this.inFlight++
    this.mostInFlight = Math.max(this.mostInFlight, this.inFlight)
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs))
      return await call()
    } finally {
      this.inFlight--
    }
  }

  #unanswered(mode: Answer): never | undefined {
    if (mode === 'timeout') throw new ProcessorError('timeout', 'no answer in time')
    if (mode === 'unavailable') throw new ProcessorError('unavailable', 'connection reset')
    if (mode === 'fail') throw new ProcessorError('failed', 'HTTP 500')
    if (mode === 'refuse') throw new ProcessorError('refused', 'HTTP 401')
    if (mode === 'unreachable') throw new ProcessorError('unreachable', 'fetch failed (ECONNREFUSED)')
    return undefined
  }
  override async authorize(req: PaymentRequest): Promise<AuthorizeOutcome> {
    if (this.holdFirst && !this.held.has(req.chargeId)) {
      await new Promise<void>((resolve) => this.held.set(req.chargeId, resolve))
    }
    this.#unanswered(this.authorizeMode)
    return this.#taking(() => super.authorize(req))
  }
  override async refund(...args: Partial<Parameters<Processor['refund']>>): Promise<OperationOutcome> {
    const refundId = args[3] ?? ''
    if (this.holdFirst && !this.held.has(refundId)) {
      await new Promise<void>((resolve) => this.held.set(refundId, resolve))
    }
    return this.#taking(() => super.refund())
  }
  override async completeStep(...args: Parameters<Simulator['completeStep']>) {
    this.#unanswered(this.authorizeMode)
    return super.completeStep(...args)
  }
  override async reverse(chargeId: string): Promise<OperationOutcome> {
    if (this.holdReversals) await new Promise<void>((resolve) => this.heldReversals.push(resolve))
    return this.#taking(() => this.#reverse(chargeId))
  }
  async #reverse(chargeId: string): Promise<OperationOutcome> {
    this.reversed.push(chargeId)
    this.#unanswered(this.reverseMode)
    if (this.reverseMode === 'decline') {
      return {
        outcome: 'declined',
        failure: { code: 'refused', reason: 'try later', next_steps: '', provider_response: {} },
      }
    }
    // an answer that is no answer: a broken adapter
    if (this.reverseMode === 'nonsense') return null as unknown as OperationOutcome
    if (this.reverseMode === 'crash') throw new TypeError('a broken adapter')
    return { outcome: 'succeeded' }
  }
}

export const processor = new RemoteProcessor()
export let t: TestApp

/** One app on the remote processor for the file, and the processor back to answering before each test. */
export function useRemoteProcessor(): void {
  beforeAll(async () => {
    t = await testApp({ testProcessor: processor })
  })
  afterAll(() => t.close())
  // a test that failed holding reversals must not hold every close after it
  afterEach(() => {
    processor.holdReversals = false
    for (const release of processor.heldReversals) release()
  })
  beforeEach(() => {
    processor.authorizeMode = 'answer'
    processor.reverseMode = 'answer'
    processor.reversed = []
    processor.delayMs = 0
    processor.mostInFlight = 0
    processor.holdFirst = false
    processor.held.clear()
    processor.holdReversals = false
    processor.heldReversals = []
  })
}

export async function charge(source: object = cardSource()) {
  const src = await t.sk.post('/v2/sources/', source)
  expect(src.status).toBe(200)
  return t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source: src.body.id })
}

/** The reversals the service sent in the background after its answers, seen through. */
export const reversalsSent = () => t.app.services.charges.waitForReversals()

/** The reversal still owed to the processor, as the store keeps it. */
export async function reversalOwed(id: string, db = t.db): Promise<boolean> {
  const row = (await db.query('SELECT reversal_asked_at FROM charges WHERE id = $1', [id])).rows[0] as {
    reversal_asked_at: string | null
  }
  return row.reversal_asked_at !== null
}

/**
 * A pass of the recovery sweep, as if its grace period had passed since the reversal was last
 * asked for. Asking again is not a change of the charge: what the API shows stays as it was.
 */
export async function sweep(id: string): Promise<void> {
  const before = (await t.sk.get(`/v2/charges/${id}`)).body
  await t.db.query("UPDATE charges SET reversal_asked_at = reversal_asked_at - interval '1 hour' WHERE id = $1", [id])
  await t.app.services.charges.recoverInterrupted(1000)
  expect((await t.sk.get(`/v2/charges/${id}`)).body).toEqual(before)
}
