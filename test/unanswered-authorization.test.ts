import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { AuthorizeOutcome, OperationOutcome, PaymentRequest } from '../src/processor/processor.js'
import { ProcessorError } from '../src/processor/processor.js'
import { Simulator } from '../src/processor/simulator.js'
import { buildApp, cardSource, REDIRECT, type TestApp, testApp } from './helpers/app.js'

/**
 * A processor reached over a network, as a live one is: it may have acted on a request it never
 * answered. It authorizes like the simulator unless told to leave authorizations or payers'
 * answers unanswered, and records every reversal asked of it.
 */
type Answer = 'answer' | 'timeout' | 'unavailable' | 'fail' | 'refuse' | 'decline' | 'nonsense' | 'crash'
class RemoteProcessor extends Simulator {
  override readonly decidesInProcess = false
  authorizeMode: Answer = 'answer'
  reverseMode: Answer = 'answer'
  reversed: string[] = []

  #unanswered(mode: Answer): never | undefined {
    if (mode === 'timeout') throw new ProcessorError('timeout', 'no answer in time')
    if (mode === 'unavailable') throw new ProcessorError('unavailable', 'connection reset')
    if (mode === 'fail') throw new ProcessorError('failed', 'HTTP 500')
    if (mode === 'refuse') throw new ProcessorError('refused', 'HTTP 401')
    return undefined
  }
  override async authorize(req: PaymentRequest): Promise<AuthorizeOutcome> {
    this.#unanswered(this.authorizeMode)
    return super.authorize(req)
  }
  override async completeStep(...args: Parameters<Simulator['completeStep']>) {
    this.#unanswered(this.authorizeMode)
    return super.completeStep(...args)
  }
  override async reverse(chargeId: string): Promise<OperationOutcome> {
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
beforeEach(() => {
  processor.authorizeMode = 'answer'
  processor.reverseMode = 'answer'
  processor.reversed = []
})

async function charge(source: object = cardSource()) {
  const src = await t.sk.post('/v2/sources/', source)
  expect(src.status).toBe(200)
  return t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source: src.body.id })
}

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
      expect(processor.reversed).toEqual([c.body.id])
      expect(await reversalOwed(c.body.id)).toBe(false)
      // nothing is left for the sweep to send again
      await sweep(c.body.id)
      expect(processor.reversed).toEqual([c.body.id])
    })
  }

  for (const mode of ['timeout', 'decline', 'nonsense', 'crash'] as const) {
    it(`a reversal that is not confirmed (${mode}) is sent again by the recovery sweep until it is`, async () => {
      processor.authorizeMode = 'timeout'
      processor.reverseMode = mode
      const c = await charge()
      expect(c.body.status).toBe('failed')
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
    expect(processor.reversed).toEqual([c.body.id])
    expect(await reversalOwed(c.body.id)).toBe(false)
  })

  it('a processor that refused the request (4xx) did nothing: the charge fails with nothing to reverse', async () => {
    processor.authorizeMode = 'refuse'
    const c = await charge()
    expect(c.body).toMatchObject({ status: 'failed', failure_data: { code: 'processor_unavailable' } })
    expect(c.body.failure_data.reason).toMatch(/refused the request/)
    expect(processor.reversed).toEqual([])
    expect(await reversalOwed(c.body.id)).toBe(false)
  })

  it('a charge whose payer abandoned a step the processor began is reversed when it expires', async () => {
    const c = await charge({ type: 'wallet_b', redirect: REDIRECT })
    expect(c.body.status).toBe('pending')
    await t.db.query("UPDATE charges SET updated_at = now() - interval '1 hour' WHERE id = $1", [c.body.id])
    expect(await t.app.services.charges.expireAbandoned(1000)).toBeGreaterThan(0)
    const expired = (await t.sk.get(`/v2/charges/${c.body.id}`)).body
    expect(expired).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
    expect(processor.reversed).toEqual([c.body.id])
    expect(await reversalOwed(c.body.id)).toBe(false)
  })

  it('an answered decline is not reversed', async () => {
    const c = await charge(cardSource({ number: '4000000000000002' }))
    expect(c.body.status).toBe('failed')
    expect(c.body.failure_data.code).toBe('card_declined')
    expect(processor.reversed).toEqual([])
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
