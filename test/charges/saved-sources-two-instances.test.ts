import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, type TestApp, testApp } from '../helpers/app.js'

/**
 * Saved cards charged over and over from two instances on one database, as two processes of the
 * service would: the outcomes that each instance records together take their sources' locks in one
 * order, so the two never deadlock (PostgreSQL would end one after a second's wait) and every
 * charge succeeds.
 */
let t: TestApp
let twin: TestApp
beforeAll(async () => {
  t = await testApp()
  twin = await t.twin()
})
afterAll(async () => {
  await twin?.close()
  await t?.close()
})

const deadlocks = async () =>
  (
    await t.db.query<{ n: number }>(
      'SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()',
    )
  ).rows[0]?.n ?? 0

describe('saved cards charged from two instances at once', () => {
  it('every charge succeeds, and no statement deadlocks', async () => {
    const saved: { source: string; customer: string }[] = []
    for (let i = 0; i < 4; i++) {
      const customer = (await t.sk.post('/v2/customers/', { email: `saved${i}@example.com`, description: 'saved' }))
        .body.id
      const source = (await t.sk.post('/v2/sources/', cardSource())).body.id
      expect((await t.sk.post(`/v2/customers/${customer}/sources`, { source })).status).toBe(200)
      saved.push({ source, customer })
    }
    const clients: Client[] = [t.sk, twin.sk]
    const before = await deadlocks()
    const statuses: Record<string, number> = {}
    for (let round = 0; round < 12; round++) {
      // each instance's concurrent charges share statements, over the same cards in other orders
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const { source, customer } = saved[(i * 7 + round) % saved.length] as (typeof saved)[number]
          return (clients[i % 2] as Client).post('/v2/charges/', { amount: 100, currency: 'usd', source, customer })
        }),
      )
      for (const r of replies) {
        const key = r.status === 201 ? r.body.status : `${r.status} ${r.body?.error?.code}`
        statuses[key] = (statuses[key] ?? 0) + 1
      }
    }
    expect(statuses).toEqual({ succeeded: 480 })
    // a backend reports its counts once it has been idle a moment
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect(await deadlocks()).toBe(before)
    const stored = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM charges WHERE status = 'succeeded'")
    expect(stored.rows[0]?.n).toBe(480)
  }, 60_000)
})
