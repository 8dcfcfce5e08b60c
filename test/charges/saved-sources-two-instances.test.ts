import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'

/**
 * Saved sources charged at once from two instances on one database, as two processes of the
 * service would. Saved cards charged over and over: the outcomes that each instance records
 * together take their sources' locks in one order, so the two never deadlock (PostgreSQL would end
 * one after a second's wait) and every charge succeeds. A saved `transfer_a` source links the
 * payer's bank account on its first approved charge and keeps the account linked first
 * (docs/testing.md): charges on it approved or made at once each record their outcome on the source
 * as it is then, so none answers with a link the source does not keep, and none undoes a link made
 * meanwhile.
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

/** A `transfer_a` source saved to a new customer, and a charge on it that waits at the bank's page. */
async function savedBankSource(round: number) {
  const source = (await t.sk.post('/v2/sources/', { type: 'transfer_a', redirect: REDIRECT })).body.id
  const customer = (await t.sk.post('/v2/customers/', { email: `bank${round}@example.com`, description: 'bank' })).body
    .id
  expect((await t.sk.post(`/v2/customers/${customer}/sources`, { source })).status).toBe(200)
  const charge = (as: Client) => as.post('/v2/charges/', { amount: 300, currency: 'php', source, customer })
  return { source, charge }
}

const approve = (as: Client, id: string) => as.post(`/v2/test/charges/${id}/authorize`, { decision: 'approve' })

describe('a saved bank transfer source', () => {
  it('approved twice at once keeps one link, and both answers show it', async () => {
    for (let round = 0; round < 10; round++) {
      const { source, charge } = await savedBankSource(round)
      const a = (await charge(t.sk)).body
      const b = (await charge(t.sk)).body
      expect([a.source.action.type, b.source.action.type]).toEqual(['redirect_to_url', 'redirect_to_url'])
      const [ra, rb] = await Promise.all([approve(t.sk, a.id), approve(twin.sk, b.id)])
      expect([ra.status, rb.status]).toEqual([200, 200])
      const kept = (await t.sk.get(`/v2/sources/${source}`)).body.bank_account.reference_id
      expect([ra.body.source.bank_account.reference_id, rb.body.source.bank_account.reference_id]).toEqual([kept, kept])
      // and each charge reads as it was answered
      expect((await t.sk.get(`/v2/charges/${a.id}`)).body).toEqual(ra.body)
      expect((await t.sk.get(`/v2/charges/${b.id}`)).body).toEqual(rb.body)
    }
  })

  it('charged while its first approval links it keeps that link', async () => {
    for (let round = 0; round < 15; round++) {
      const { source, charge } = await savedBankSource(100 + round)
      const first = (await charge(t.sk)).body
      const [approved, ...made] = await Promise.all([
        approve(twin.sk, first.id),
        charge(t.sk),
        charge(t.sk),
        charge(twin.sk),
      ])
      expect(approved.status, approved.text).toBe(200)
      for (const m of made) expect(m.status, m.text).toBe(201)
      const kept = (await t.sk.get(`/v2/sources/${source}`)).body.bank_account
      expect(kept?.reference_id).toBe(approved.body.source.bank_account.reference_id)
    }
  })
})
