import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import type { AuthorizeOutcome, PaymentRequest } from '../src/processor/processor.js'
import { Simulator } from '../src/processor/simulator.js'
import { buildApp, type Client, cardSource, client, recordingDb, type TestApp, testApp } from './helpers/app.js'

/**
 * The simulator decides in process, so a new charge on a single-use source is decided first and
 * stored once, with its outcome, its event and its source taken (docs/api.md). Nothing of a
 * charge whose source another request took while it was being decided may be stored.
 */

/** The simulator, whose next authorization waits until the test lets it answer. */
class HeldSimulator extends Simulator {
  #held: { reached: () => void; release: Promise<void> } | undefined
  /** Holds the next authorization: resolves once it has been reached; call the answer to let it go. */
  holdNext(): { reached: Promise<void>; release: () => void } {
    let reached!: () => void
    let release!: () => void
    const reachedP = new Promise<void>((r) => {
      reached = r
    })
    const releaseP = new Promise<void>((r) => {
      release = r
    })
    this.#held = { reached, release: releaseP }
    return { reached: reachedP, release }
  }
  override async authorize(req: PaymentRequest): Promise<AuthorizeOutcome> {
    const held = this.#held
    this.#held = undefined
    if (held) {
      held.reached()
      await held.release
    }
    return super.authorize(req)
  }
}

const simulator = new HeldSimulator()
let t: TestApp
let app: App
let sk: Client
/** every statement the app under test sent */
const statements: string[] = []

beforeAll(async () => {
  t = await testApp()
  const recording = recordingDb(t.db, statements)
  ;({ app } = await buildApp(recording, t.vault, { testProcessor: simulator }))
  sk = client(app, t.account.sk_test_key)
})
afterAll(async () => {
  await app.close()
  await t.close()
})

async function chargesOf(sourceId: string) {
  const res = await t.db.query<{ id: string; status: string; processing: string | null }>(
    'SELECT id, status, processing FROM charges WHERE source_id = $1',
    [sourceId],
  )
  return res.rows
}

async function eventsOf(chargeIds: string[]) {
  const res = await t.db.query<{ type: string }>('SELECT type FROM events WHERE charge_id = ANY($1::text[])', [
    chargeIds,
  ])
  return res.rows.map((r) => r.type)
}

async function storedCvc(sourceId: string) {
  const res = await t.db.query<{ card_cvc_enc: string | null }>('SELECT card_cvc_enc FROM sources WHERE id = $1', [
    sourceId,
  ])
  return res.rows[0]?.card_cvc_enc
}

describe('a charge through the simulator', () => {
  it('is written by one statement, decided, with its event, its source used and its security code gone', async () => {
    const src = await sk.post('/v2/sources/', cardSource())
    expect(await storedCvc(src.body.id)).toMatch(/^v1:/)
    const from = statements.length
    const c = await sk.post('/v2/charges/', { amount: 1200, currency: 'usd', source: src.body.id })
    expect(c.status, c.text).toBe(201)
    expect(c.body).toMatchObject({ status: 'succeeded', captured: true, amount: 1200 })
    expect(c.body.source).toMatchObject({ id: src.body.id, used: true })
    expect(c.body.source.card.cvc_checked).toBe('pass')

    const sent = statements.slice(from)
    expect(sent.filter((s) => /INSERT INTO charges/.test(s))).toHaveLength(1)
    expect(sent.filter((s) => /UPDATE charges/.test(s))).toHaveLength(0)
    expect(await chargesOf(src.body.id)).toEqual([{ id: c.body.id, status: 'succeeded', processing: null }])
    expect(await eventsOf([c.body.id])).toEqual(['charge.succeeded'])
    expect(await storedCvc(src.body.id)).toBeNull()
    expect((await sk.get(`/v2/charges/${c.body.id}`)).body).toEqual(c.body)
  })

  it('that waits for 3-D Secure is stored pending, with its security code kept for the authorization after', async () => {
    const src = await sk.post('/v2/sources/', cardSource({ number: '4000000000003220' }))
    const c = await sk.post('/v2/charges/', { amount: 800, currency: 'usd', source: src.body.id })
    expect(c.body).toMatchObject({ status: 'pending' })
    expect(c.body.source.action.type).toBe('redirect_to_url')
    expect(await chargesOf(src.body.id)).toEqual([{ id: c.body.id, status: 'pending', processing: null }])
    expect(await eventsOf([c.body.id])).toEqual(['charge.pending'])
    expect(await storedCvc(src.body.id)).toMatch(/^v1:/)
    const ok = await sk.post(`/v2/test/charges/${c.body.id}/authorize`, { decision: 'approve' })
    expect(ok.body.status).toBe('succeeded')
    expect(await storedCvc(src.body.id)).toBeNull()
  })

  it('whose source is charged by another request while it is decided stores nothing, and is source_used', async () => {
    const src = await sk.post('/v2/sources/', cardSource())
    const held = simulator.holdNext()
    const first = sk.post('/v2/charges/', { amount: 300, currency: 'usd', source: src.body.id })
    await held.reached
    const second = await sk.post('/v2/charges/', { amount: 400, currency: 'usd', source: src.body.id })
    expect(second.status, second.text).toBe(201)
    held.release()
    const refused = await first
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error).toMatchObject({ code: 'source_used', param: 'source' })
    const stored = await chargesOf(src.body.id)
    expect(stored.map((c) => c.id)).toEqual([second.body.id])
    expect(await eventsOf([second.body.id])).toEqual(['charge.succeeded'])
    const all = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM charges WHERE amount = 300')
    expect(all.rows[0]?.n).toBe(0)
  })

  it('whose source is attached to a customer while it is decided stores nothing, and the source stays attached', async () => {
    const src = await sk.post('/v2/sources/', cardSource())
    const customer = await sk.post('/v2/customers/', { email: 'held@example.com', description: 'Held' })
    expect(customer.status, customer.text).toBe(201)
    const held = simulator.holdNext()
    const charge = sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id })
    await held.reached
    const attached = await sk.post(`/v2/customers/${customer.body.id}/sources`, { source: src.body.id })
    expect(attached.status, attached.text).toBe(200)
    held.release()
    const refused = await charge
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error).toMatchObject({ code: 'customer_source_mismatch', param: 'customer' })
    expect(await chargesOf(src.body.id)).toEqual([])
    const source = await sk.get(`/v2/sources/${src.body.id}`)
    expect(source.body).toMatchObject({ used: true, vaulted: true })
    expect(source.body.card.cvc_checked).toBe('unchecked')
    // the saved source is charged as the customer's, once the charge names the customer
    const again = await sk.post('/v2/charges/', {
      amount: 500,
      currency: 'usd',
      source: src.body.id,
      customer: customer.body.id,
    })
    expect(again.status, again.text).toBe(201)
    expect(again.body.status).toBe('succeeded')
  })
})
