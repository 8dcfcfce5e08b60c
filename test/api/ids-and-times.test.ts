import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, later, type TestApp, testApp } from '../helpers/app.js'

/**
 * An id's first 12 hex digits are its object's creation time in milliseconds, and ids sort by
 * creation: an object's `created_at` is that same time, so a list newest first by id is newest
 * first by `created_at` too, even for objects made at once.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp({ liveProcessor: new Simulator() })
})
afterAll(() => t.close())

/** The id's time and the object's created_at, both to the millisecond. */
const times = (o: { id: string; created_at: string }) => ({
  id: new Date(Number.parseInt(o.id.slice(-32, -20), 16)).toISOString(),
  created_at: `${o.created_at.slice(0, 23)}Z`,
})

describe("an object's id and created_at", () => {
  for (const mode of ['test', 'live'] as const) {
    it(`name the same millisecond: customers, sources, charges, refunds (${mode} mode)`, async () => {
      const [sk, pk] = mode === 'test' ? [t.sk, t.pk] : [t.skLive, t.pkLive]
      const made: { id: string; created_at: string }[] = []
      for (let i = 0; i < 5; i++) {
        const customer = await sk.post('/v2/customers/', { email: `times${i}@example.com`, description: 'times' })
        const source = await pk.post('/v2/sources/', cardSource())
        const charge = await sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: source.body.id })
        expect(charge.body.status, charge.text).toBe('succeeded')
        const refund = await sk.post(`/v2/charges/${charge.body.id}/refund`, { amount: 100 })
        expect(refund.status, refund.text).toBeLessThan(300)
        made.push(customer.body, source.body, charge.body, refund.body)
      }
      for (const o of made) expect(times(o).created_at, o.id).toBe(times(o).id)
    })
  }

  it('list newest first by created_at as by id, when made at once', async () => {
    const customers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await t.sk.post('/v2/customers/', { email: `atonce${i}@example.com`, description: 'at once' })
        expect(res.status, res.text).toBe(201)
        return res.body
      }),
    )
    for (const c of customers) expect(times(c).created_at, c.id).toBe(times(c).id)
    const charges = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const source = await t.pk.post('/v2/sources/', cardSource())
        return (await t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: source.body.id })).body
      }),
    )
    const listed = (await t.sk.get('/v2/charges/?limit=100')).body.data as { id: string; created_at: string }[]
    const ours = listed.filter((c) => charges.some((made) => made.id === c.id))
    expect(ours).toHaveLength(20)
    const created = ours.map((c) => c.created_at)
    expect(created).toEqual([...created].sort().reverse())
    for (const c of ours) expect(times(c).created_at, c.id).toBe(times(c).id)
  })

  it("never stamp a change before the object's making, when the service's clock runs ahead of the database's", async () => {
    // the id's time is the service's clock, a change's the database's
    await later(3_000, async () => {
      const customer = (await t.skLive.post('/v2/customers/', { email: 'skew@example.com', description: 'd' })).body
      const updated = (await t.skLive.put(`/v2/customers/${customer.id}`, { description: 'e' })).body
      const source = (await t.pkLive.post('/v2/sources/', cardSource())).body
      await t.skLive.post(`/v2/customers/${customer.id}/sources`, { source: source.id })
      const saved = (await t.skLive.get(`/v2/sources/${source.id}`)).body
      const other = (await t.pkLive.post('/v2/sources/', cardSource())).body
      const held = await t.skLive.post('/v2/charges/', {
        amount: 500,
        currency: 'usd',
        source: other.id,
        capture: false,
      })
      const captured = (await t.skLive.post(`/v2/charges/${held.body.id}/capture`, {})).body
      expect(saved.vaulted).toBe(true)
      expect(captured.captured).toBe(true)
      for (const o of [updated, saved, captured]) expect(o.updated_at >= o.created_at, JSON.stringify(o)).toBe(true)
    })
  })
})
