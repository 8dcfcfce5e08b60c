import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Queryable } from '../../src/store/db.js'
import { REDIRECT, type Reply, type TestApp, testApp } from '../helpers/app.js'
import { expectError, expectRefused } from '../helpers/expect.js'
import { customerSteps } from './customer-harness.js'

/**
 * Attach sources to a customer and detach them: a source is attached once, to one customer, even
 * when 20 attaches race in one process or across two processes on PostgreSQL.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { newCustomer, newSource } = customerSteps(() => t)

describe('attaching and detaching sources', () => {
  it('attach: the source becomes used and vaulted and shows in customer.sources', async () => {
    const c = await newCustomer()
    const s = await newSource()
    const res = await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })
    expect(res.status, res.text).toBe(200)
    expect(res.body.id).toBe(c.id)
    expect(res.body.object).toBe('customer')
    expect(res.body.sources).toHaveLength(1)
    const attached = res.body.sources[0]
    expect(attached).toMatchObject({ id: s.id, used: true, vaulted: true, type: 'card' })
    expect(attached.card.last4).toBe('4242')
    expect(attached.card.number).toBeUndefined()

    const src = await t.sk.get(`/v2/sources/${s.id}`)
    expect(src.body.used).toBe(true)
    expect(src.body.vaulted).toBe(true)
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.sources.map((x: { id: string }) => x.id)).toEqual([s.id])
  })

  it('a customer holds several sources, of any type', async () => {
    const c = await newCustomer()
    const a = await newSource()
    const b = await newSource(t.sk, { type: 'wallet_c', redirect: REDIRECT })
    await t.sk.post(`/v2/customers/${c.id}/sources`, { source: a.id })
    const res = await t.sk.post(`/v2/customers/${c.id}/sources`, { source: b.id })
    expect(res.status).toBe(200)
    expect(res.body.sources.map((x: { id: string }) => x.id).sort()).toEqual([a.id, b.id].sort())
  })

  it('a second attach of the same source, to the same or another customer, is 400 source_used', async () => {
    const c = await newCustomer()
    const d = await newCustomer()
    const s = await newSource()
    expect((await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })).status).toBe(200)
    for (const target of [c.id, d.id]) {
      const res = await t.sk.post(`/v2/customers/${target}/sources`, { source: s.id })
      expectError(res, 400, 'source_used')
      expect(res.body.error.type).toBe('invalid_request_error')
      expect(res.body.error.param).toBe('source')
    }
    expect((await t.sk.get(`/v2/customers/${d.id}`)).body.sources).toEqual([])
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.sources).toHaveLength(1)
  })

  it('a detached (used) source cannot be attached again', async () => {
    const c = await newCustomer()
    const s = await newSource()
    await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })
    expect((await t.sk.delete(`/v2/customers/${c.id}/sources/${s.id}`)).status).toBe(200)
    expectError(await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id }), 400, 'source_used')
  })

  it('attach: unknown customer or source is 404; the body needs source', async () => {
    const c = await newCustomer()
    const s = await newSource()
    expectError(
      await t.sk.post('/v2/customers/cus_00000000000000000000000000000000/sources', { source: s.id }),
      404,
      'resource_missing',
    )
    expect((await t.sk.get(`/v2/sources/${s.id}`)).body.used).toBe(false)
    const noSource = await t.sk.post(`/v2/customers/${c.id}/sources`, {
      source: 'src_00000000000000000000000000000000',
    })
    expectError(noSource, 404, 'resource_missing')
    // the id that names nothing came in the body's `source`, as create charge reports it
    expect(noSource.body.error.param).toBe('source')
    expectRefused(await t.sk.post(`/v2/customers/${c.id}/sources`, {}), ['body', 'source'], 'parameter_missing')
    expectRefused(
      await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id, default: true }),
      ['body', 'default'],
      'parameter_unknown',
    )
  })

  it('detach: the source leaves customer.sources and is no longer vaulted', async () => {
    const c = await newCustomer()
    const keep = await newSource()
    const drop = await newSource()
    await t.sk.post(`/v2/customers/${c.id}/sources`, { source: keep.id })
    await t.sk.post(`/v2/customers/${c.id}/sources`, { source: drop.id })
    const res = await t.sk.delete(`/v2/customers/${c.id}/sources/${drop.id}`)
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(c.id)
    expect(res.body.sources.map((x: { id: string }) => x.id)).toEqual([keep.id])
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.sources.map((x: { id: string }) => x.id)).toEqual([keep.id])
    const dropped = await t.sk.get(`/v2/sources/${drop.id}`)
    expect(dropped.body.vaulted).toBe(false)
    expect(dropped.body.used).toBe(true)
  })

  it('detach: a source not attached to that customer is 400; unknown ids are 404', async () => {
    const c = await newCustomer()
    const d = await newCustomer()
    const s = await newSource()
    const loose = await newSource()
    await t.sk.post(`/v2/customers/${d.id}/sources`, { source: s.id })
    expectError(await t.sk.delete(`/v2/customers/${c.id}/sources/${s.id}`), 400, 'source_not_attached')
    expectError(await t.sk.delete(`/v2/customers/${c.id}/sources/${loose.id}`), 400, 'source_not_attached')
    expect((await t.sk.get(`/v2/customers/${d.id}`)).body.sources).toHaveLength(1)
    expectError(
      await t.sk.delete(`/v2/customers/${c.id}/sources/src_00000000000000000000000000000000`),
      404,
      'resource_missing',
    )
    expectError(
      await t.sk.delete(`/v2/customers/cus_00000000000000000000000000000000/sources/${s.id}`),
      404,
      'resource_missing',
    )
  })
})

describe('concurrent attaches in one process', () => {
  it('of 20 attaches of one source at once, exactly one wins', async () => {
    const customers = await Promise.all(Array.from({ length: 20 }, () => newCustomer()))
    const s = await newSource()
    const results = await Promise.all(
      customers.map((c) => t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    expect(results.filter((r) => r.status === 400 && r.body.error.code === 'source_used')).toHaveLength(19)
    const holders = await t.db.query<{ n: number }>(
      'SELECT count(*) AS n FROM sources WHERE id = $1 AND customer_id IS NOT NULL',
      [s.id],
    )
    expect(Number(holders.rows[0]?.n)).toBe(1)
  })
})

describe('concurrent attaches across two processes (PostgreSQL)', () => {
  it('of 20 attaches of one source to 20 customers, exactly one wins', async () => {
    const twin = await t.twin()
    try {
      const customers = await Promise.all(Array.from({ length: 20 }, () => newCustomer()))
      const s = await newSource()
      const results = await Promise.all(
        customers.map((c, i) => (i % 2 === 0 ? t.sk : twin.sk).post(`/v2/customers/${c.id}/sources`, { source: s.id })),
      )
      const ok = results.filter((r) => r.status === 200)
      const used = results.filter((r) => r.status === 400 && r.body.error.code === 'source_used')
      expect(ok).toHaveLength(1)
      expect(used).toHaveLength(19)
      const winner = ok[0]?.body
      expect(winner.sources.map((x: { id: string }) => x.id)).toEqual([s.id])

      const holders = await t.db.query<{ customer_id: string; used: boolean; vaulted: boolean }>(
        'SELECT customer_id, used, vaulted FROM sources WHERE id = $1',
        [s.id],
      )
      expect(holders.rows).toEqual([{ customer_id: winner.id, used: true, vaulted: true }])
      const attached = await t.db.query<{ n: number }>(
        'SELECT count(*) AS n FROM sources WHERE customer_id = ANY($1::text[])',
        [customers.map((c) => c.id)],
      )
      expect(Number(attached.rows[0]?.n)).toBe(1)
      for (const c of customers) {
        const seen = await twin.sk.get(`/v2/customers/${c.id}`)
        expect(seen.body.sources).toHaveLength(c.id === winner.id ? 1 : 0)
      }
    } finally {
      await twin.close()
    }
  })
})

describe('what cannot be attached or detached', () => {
  it('a card source whose number was erased, never used within the retention, is 400 card_unavailable', async () => {
    const c = await newCustomer()
    const s = await newSource()
    const kept = await newSource()
    // the recovery sweep's pass once the retention (here 1 ms) is over for both
    await new Promise((resolve) => setTimeout(resolve, 5))
    await t.sk.post(`/v2/customers/${c.id}/sources`, { source: kept.id })
    expect(await t.app.services.sources.eraseOldCardData(1)).toBeGreaterThan(0)

    const res = await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })
    expectError(res, 400, 'card_unavailable', 'source')
    expect(res.text).not.toContain('4242424242424242')
    expect((await t.sk.get(`/v2/sources/${s.id}`)).body).toMatchObject({ used: false, vaulted: false })
    // the card saved before the sweep keeps its number, and is still charged
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.sources.map((x: { id: string }) => x.id)).toEqual([kept.id])
    const charge = await t.sk.post('/v2/charges/', { amount: 100, currency: 'usd', source: kept.id, customer: c.id })
    expect(charge.body.status, charge.text).toBe('succeeded')
  })

  it('an over-long id names nothing: 404, as on every other route', async () => {
    const c = await newCustomer()
    const s = await newSource()
    const long = '0'.repeat(101)
    expectError(await t.sk.delete(`/v2/customers/cus_${long}/sources/${s.id}`), 404, 'resource_missing')
    expectError(await t.sk.delete(`/v2/customers/${c.id}/sources/src_${long}`), 404, 'resource_missing')
  })
})

describe('deleting a customer while its saved sources are being charged (PostgreSQL)', () => {
  it('locks the sources in the order of their ids, as a charge does: it waits, and never deadlocks', async () => {
    const c = await newCustomer()
    const first = await newSource()
    const second = await newSource()
    expect(first.id < second.id).toBe(true)
    // attached in the other order, so a scan by customer meets the second source first
    for (const s of [second, first]) {
      expect((await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })).status).toBe(200)
    }
    const lockSource = (tx: Queryable, id: string) => tx.query('SELECT id FROM sources WHERE id = $1 FOR UPDATE', [id])
    let deleted: Promise<Reply> | undefined
    // a statement of charges on both cards locks the first, then the second
    await t.db.transaction(async (tx) => {
      await lockSource(tx, first.id)
      deleted = t.sk.delete(`/v2/customers/${c.id}`)
      await waitForLockWait()
      await lockSource(tx, second.id)
    })
    const res = await (deleted as Promise<Reply>)
    expect(res.status, res.text).toBe(200)
    const detached = await t.sk.get(`/v2/sources/${second.id}`)
    expect(detached.body).toMatchObject({ vaulted: false })
  })
})

/** Until another connection of the database waits for a row lock. */
async function waitForLockWait() {
  for (let i = 0; i < 200; i++) {
    const waiting = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    )
    if ((waiting.rows[0]?.n ?? 0) > 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('no statement came to wait for the lock')
}
