import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { cardSource, later, type TestApp, testApp } from './helpers/app.js'

const HOUR = 3_600_000

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

async function newSource(): Promise<string> {
  const res = await t.sk.post('/v2/sources/', cardSource())
  expect(res.status).toBe(200)
  return res.body.id
}

/** What the store holds of a source's card: whether its number and its security code are kept. */
async function held(id: string): Promise<{ number: boolean; cvc: boolean }> {
  const row = (
    await t.db.query(
      'SELECT card_number_enc IS NOT NULL AS number, card_cvc_enc IS NOT NULL AS cvc FROM sources WHERE id = $1',
      [id],
    )
  ).rows[0] as { number: boolean; cvc: boolean }
  return row
}

const erase = (retentionMs: number) => t.app.services.sources.eraseOldCardData(retentionMs)

describe('card data kept no longer than the retention', () => {
  it('erases the code of every source older than the retention, and the number of one never used', async () => {
    const unused = await newSource()
    const customer = (await t.sk.post('/v2/customers/', { email: 'a@example.com', description: 'A' })).body.id
    const attached = await newSource()
    expect((await t.sk.post(`/v2/customers/${customer}/sources`, { source: attached })).status).toBe(200)
    const before = (await t.sk.get(`/v2/sources/${unused}`)).body
    // made two hours on, as a source created then would be
    const recent = await later(2 * HOUR, newSource)
    expect(await held(unused)).toEqual({ number: true, cvc: true })

    expect(await later(2 * HOUR, () => erase(HOUR))).toBeGreaterThanOrEqual(2)
    expect(await held(unused)).toEqual({ number: false, cvc: false })
    // a saved card is kept to be charged again, but not its security code
    expect(await held(attached)).toEqual({ number: true, cvc: false })
    expect(await held(recent)).toEqual({ number: true, cvc: true })
    // erasing is not a change of the source as the API shows it
    expect((await t.sk.get(`/v2/sources/${unused}`)).body).toEqual(before)

    // a source whose number is gone cannot be charged: the charge fails, and nothing reaches the processor
    const old = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: unused })
    expect(old.status).toBe(201)
    expect(old.body.status).toBe('failed')
    expect(old.body.failure_data.code).toBe('card_unavailable')
    // a saved card charged after its code is gone is authorized without one: the check stays unchecked
    const saved = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', customer, source: attached })
    expect(saved.status).toBe(201)
    expect(saved.body.status).toBe('succeeded')
    expect(saved.body.source.card.cvc_checked).toBe('unchecked')
    const fresh = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: recent })
    expect(fresh.body.source.card.cvc_checked).toBe('pass')
  })

  it('goes on from where the last pass stopped, through any number of sources', async () => {
    const ids: string[] = []
    for (let i = 0; i < 24; i++) ids.push(...(await Promise.all(Array.from({ length: 50 }, newSource))))
    // 1 200 sources: more than one statement's 500. The clock is set past the last test's: ids made
    // after it was moved on carry its time
    expect(await later(4 * HOUR, () => erase(HOUR))).toBe(ids.length)
    const left = await t.db.query(
      'SELECT count(*)::int AS n FROM sources WHERE id = ANY($1) AND card_cvc_enc IS NOT NULL',
      [ids],
    )
    expect((left.rows[0] as { n: number }).n).toBe(0)
    // a later pass does not look at them again: a code put back behind the position stays
    await t.db.query("UPDATE sources SET card_cvc_enc = 'put back' WHERE id = $1", [ids[0]])
    expect(await later(5 * HOUR, () => erase(HOUR))).toBe(0)
    expect((await held(ids[0] as string)).cvc).toBe(true)
    await t.db.query('UPDATE sources SET card_cvc_enc = NULL WHERE id = $1', [ids[0]])
  })
})

describe('the card number of a single-use source', () => {
  const charge = (source: string, extra: Record<string, unknown> = {}) =>
    t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source, ...extra })

  it('is erased once its charge is decided; capture, void and refund go on without it', async () => {
    const a = await newSource()
    const captured = await charge(a, { capture: false })
    expect(captured.body.status).toBe('succeeded')
    expect(await held(a)).toEqual({ number: false, cvc: false })
    const done = await t.sk.post(`/v2/charges/${captured.body.id}/capture`, {})
    expect(done.status).toBe(200)
    expect(done.body.captured).toBe(true)
    const refunded = await t.sk.post(`/v2/charges/${captured.body.id}/refund`, { amount: 400 })
    expect(refunded.status).toBe(200)
    expect(refunded.body.refunds[0].status).toBe('succeeded')

    const b = await newSource()
    const uncaptured = await charge(b, { capture: false })
    expect(await held(b)).toEqual({ number: false, cvc: false })
    expect((await t.sk.post(`/v2/charges/${uncaptured.body.id}/void`, {})).body.status).toBe('voided')

    const declining = (await t.sk.post('/v2/sources/', cardSource({ number: '4000000000000002' }))).body.id
    expect((await charge(declining)).body.status).toBe('failed')
    expect(await held(declining)).toEqual({ number: false, cvc: false })
  })

  it('is kept while the payer has a step to take, and erased with the decision', async () => {
    const src = (await t.sk.post('/v2/sources/', cardSource({ number: '4000000000003220' }))).body.id
    const pending = await charge(src)
    expect(pending.body.status).toBe('pending')
    expect(await held(src)).toEqual({ number: true, cvc: true })
    const decided = await t.sk.post(`/v2/test/charges/${pending.body.id}/authorize`, { decision: 'approve' })
    expect(decided.body.status).toBe('succeeded')
    expect(await held(src)).toEqual({ number: false, cvc: false })
  })

  it("of a customer's saved card is kept to charge it again", async () => {
    const customer = (await t.sk.post('/v2/customers/', { email: 'b@example.com', description: 'B' })).body.id
    const src = await newSource()
    await t.sk.post(`/v2/customers/${customer}/sources`, { source: src })
    expect((await charge(src, { customer })).body.status).toBe('succeeded')
    expect((await held(src)).number).toBe(true)
    expect((await charge(src, { customer })).body.status).toBe('succeeded')
  })
})

describe('the recovery sweep', () => {
  it('erases old security codes on its own, even while its other work fails', async () => {
    const swept = await testApp({}, { recovery: { intervalMs: 50, graceMs: 60_000, cardDataRetentionMs: 1 } })
    swept.app.services.charges.recoverInterrupted = async () => {
      throw new Error('the charges part of the sweep failed')
    }
    try {
      const res = await swept.sk.post('/v2/sources/', cardSource())
      expect(res.status).toBe(200)
      const cvc = async () =>
        (await swept.db.query('SELECT card_cvc_enc IS NOT NULL AS cvc FROM sources WHERE id = $1', [res.body.id]))
          .rows[0] as { cvc: boolean }
      // the clock past the earlier tests': ids made after it was moved on carry its time
      await later(10 * HOUR, () =>
        vi.waitFor(async () => expect((await cvc()).cvc).toBe(false), { timeout: 5_000, interval: 50 }),
      )
    } finally {
      await swept.close()
    }
  })
})
