import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { AuthorizeOutcome, OperationOutcome, PaymentRequest, Processor } from '../src/processor/processor.js'
import { ProcessorError } from '../src/processor/processor.js'
import { Simulator } from '../src/processor/simulator.js'
import { buildApp, cardSource, REDIRECT, type TestApp, testApp } from './helpers/app.js'

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
class RemoteProcessor extends Simulator {
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

const processor = new RemoteProcessor()
let t: TestApp
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

async function charge(source: object = cardSource()) {
  const src = await t.sk.post('/v2/sources/', source)
  expect(src.status).toBe(200)
  return t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source: src.body.id })
}

/** The reversals the service sent in the background after its answers, seen through. */
const reversalsSent = () => t.app.services.charges.waitForReversals()

/** The reversal still owed to the processor, as the store keeps it. */
async function reversalOwed(id: string, db = t.db): Promise<boolean> {
  const row = (await db.query('SELECT reversal_asked_at FROM charges WHERE id = $1', [id])).rows[0] as {
    reversal_asked_at: string | null
  }
  return row.reversal_asked_at !== null
}

/**
 * A pass of the recovery sweep, as if its grace period had passed since the reversal was last
 * asked for. Asking again is not a change of the charge: what the API shows stays as it was.
 */
async function sweep(id: string): Promise<void> {
  const before = (await t.sk.get(`/v2/charges/${id}`)).body
  await t.db.query("UPDATE charges SET reversal_asked_at = reversal_asked_at - interval '1 hour' WHERE id = $1", [id])
  await t.app.services.charges.recoverInterrupted(1000)
  expect((await t.sk.get(`/v2/charges/${id}`)).body).toEqual(before)
}

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
      await t.db.query("UPDATE charges SET updated_at = now() - interval '1 hour' WHERE id = $1", [id])
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
    await t.db.query("UPDATE charges SET updated_at = now() - interval '1 hour' WHERE id = $1", [c.body.id])
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

// Each call to the processor here takes 100 ms; one after another, a sweep pass would have one in
// flight at a time. A processor timing out takes 10 s a call, and a pass must end within its grace.
describe('a recovery sweep pass', () => {
  it('asks for every reversal owed at once', async () => {
    processor.authorizeMode = 'timeout'
    processor.reverseMode = 'timeout'
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await charge()).body.id)
    await reversalsSent()
    for (const id of ids) expect(await reversalOwed(id)).toBe(true)
    processor.reverseMode = 'answer'
    processor.delayMs = 100
    await t.db.query("UPDATE charges SET reversal_asked_at = now() - interval '1 hour' WHERE id = ANY($1)", [ids])
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThanOrEqual(4)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(4)
    for (const id of ids) expect(await reversalOwed(id)).toBe(false)
  })

  it('fails every abandoned payer step at once, each reversed', async () => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await charge({ type: 'wallet_b', redirect: REDIRECT })).body.id)
    processor.delayMs = 100
    await t.db.query("UPDATE charges SET updated_at = now() - interval '1 hour' WHERE id = ANY($1)", [ids])
    expect(await t.app.services.charges.expireAbandoned(1000)).toBeGreaterThanOrEqual(3)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(3)
    await reversalsSent()
    for (const id of ids) {
      expect((await t.sk.get(`/v2/charges/${id}`)).body).toMatchObject({ status: 'failed' })
      expect(processor.reversed).toContain(id)
    }
  })

  it('sends every interrupted authorization again at once', async () => {
    processor.holdFirst = true
    // the requests whose processes are taken for dead: their authorizations never come back
    const sources: string[] = []
    for (let i = 0; i < 3; i++) sources.push((await t.sk.post('/v2/sources/', cardSource())).body.id)
    const stalled = sources.map((source) => t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source }))
    while (processor.held.size < 3) await new Promise((resolve) => setTimeout(resolve, 10))
    const ids = [...processor.held.keys()]
    processor.delayMs = 100
    await t.db.query("UPDATE charges SET updated_at = now() - interval '1 hour' WHERE id = ANY($1)", [ids])
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThanOrEqual(3)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(3)
    for (const id of ids) expect((await t.sk.get(`/v2/charges/${id}`)).body.status).toBe('succeeded')
    for (const release of processor.held.values()) release()
    // a request still waiting when its authorization was finished for it answers the charge as it stands
    for (const res of await Promise.all(stalled)) {
      expect(res.status).toBe(201)
      expect(ids).toContain(res.body.id)
      expect(res.body.status).toBe('succeeded')
    }
  })

  it('settles every interrupted refund at once', async () => {
    const charged: string[] = []
    for (let i = 0; i < 3; i++) charged.push((await charge()).body.id)
    processor.holdFirst = true
    const stalled = charged.map((id) => t.sk.post(`/v2/charges/${id}/refund`, { amount: 500 }))
    while (processor.held.size < 3) await new Promise((resolve) => setTimeout(resolve, 10))
    processor.delayMs = 100
    await t.db.query("UPDATE refunds SET updated_at = now() - interval '1 hour' WHERE charge_id = ANY($1)", [charged])
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThanOrEqual(3)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(3)
    for (const id of charged) expect((await t.sk.get(`/v2/charges/${id}`)).body.amount_refunded).toBe(500)
    for (const release of processor.held.values()) release()
    for (const res of await Promise.all(stalled)) expect(res.status).toBeLessThan(300)
  })
})

describe('a live charge that expires after its live processor is gone from the configuration', () => {
  it('fails with nothing owed: there is no processor left to ask', async () => {
    const live = new RemoteProcessor()
    const withLive = await testApp({ liveProcessor: live })
    try {
      const src = await withLive.skLive.post('/v2/sources/', { type: 'wallet_b', redirect: REDIRECT })
      const c = await withLive.skLive.post('/v2/charges/', { amount: 900, currency: 'usd', source: src.body.id })
      expect(c.body.status).toBe('pending')
      await withLive.db.query("UPDATE charges SET updated_at = now() - interval '1 hour' WHERE id = $1", [c.body.id])
      // the same store, started again without a live processor
      const { app: without } = await buildApp(withLive.db, withLive.vault)
      try {
        expect(await without.services.charges.expireAbandoned(1000)).toBe(1)
      } finally {
        await without.close()
      }
      const expired = (await withLive.skLive.get(`/v2/charges/${c.body.id}`)).body
      expect(expired).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
      expect(await reversalOwed(c.body.id, withLive.db)).toBe(false)
      expect(live.reversed).toEqual([])
    } finally {
      await withLive.close()
    }
  })
})

describe('a processor that decides in process', () => {
  it('has nothing to reverse when its simulated timeout fails a charge', async () => {
    const inProcess = await testApp()
    try {
      const src = await inProcess.sk.post('/v2/sources/', cardSource({ number: '4000000000000036' }))
      const c = await inProcess.sk.post('/v2/charges/', { amount: 100, currency: 'usd', source: src.body.id })
      expect(c.body.failure_data.code).toBe('processor_timeout')
      expect(await reversalOwed(c.body.id, inProcess.db)).toBe(false)
    } finally {
      await inProcess.close()
    }
  })
})
