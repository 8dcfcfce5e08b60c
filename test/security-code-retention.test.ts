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

const erase = (retentionMs: number) => t.app.services.sources.eraseOldSecurityCodes(retentionMs)

describe('security codes kept no longer than the retention', () => {
  it('erases the code of a source older than the retention, charged or not, and keeps its number', async () => {
    const unused = await newSource()
    const customer = (await t.sk.post('/v2/customers/', { email: 'a@example.com', description: 'A' })).body.id
    const attached = await newSource()
    expect((await t.sk.post(`/v2/customers/${customer}/sources`, { source: attached })).status).toBe(200)
    const before = (await t.sk.get(`/v2/sources/${unused}`)).body
    // made two hours on, as a source created then would be
    const recent = await later(2 * HOUR, newSource)
    expect(await held(unused)).toEqual({ number: true, cvc: true })

    expect(await later(2 * HOUR, () => erase(HOUR))).toBeGreaterThanOrEqual(2)
    expect(await held(unused)).toEqual({ number: true, cvc: false })
    expect(await held(attached)).toEqual({ number: true, cvc: false })
    expect(await held(recent)).toEqual({ number: true, cvc: true })
    // erasing is not a change of the source as the API shows it
    expect((await t.sk.get(`/v2/sources/${unused}`)).body).toEqual(before)

    // a source charged after its code is gone is authorized without one: the check stays unchecked
    const old = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: unused })
    expect(old.status).toBe(201)
    expect(old.body.status).toBe('succeeded')
    expect(old.body.source.card.cvc_checked).toBe('unchecked')
    const saved = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', customer, source: attached })
    expect(saved.status).toBe(201)
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
    expect(await held(ids[0] as string)).toEqual({ number: true, cvc: true })
    await t.db.query('UPDATE sources SET card_cvc_enc = NULL WHERE id = $1', [ids[0]])
  })
})

describe('the recovery sweep', () => {
  it('erases old security codes on its own, even while its other work fails', async () => {
    const swept = await testApp({}, { recovery: { intervalMs: 50, graceMs: 60_000, securityCodeRetentionMs: 1 } })
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
