import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listChargesWithDetails } from '../src/store/charge-views.js'
import type { Queryable } from '../src/store/db.js'
import { cardSource, type TestApp, testApp } from './helpers/app.js'

/**
 * The store's statements are prepared once with a generic plan. On a large store the page of
 * charges' estimate can pass PostgreSQL's jit_above_cost, and the plan would then be compiled in
 * every execution, costing far more than the statement itself: the connections run without JIT.
 */
describe('the page of charges on PostgreSQL', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await testApp()
    const src = await t.sk.post('/v2/sources/', cardSource())
    expect((await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })).status).toBe(201)
  })

  afterAll(async () => {
    await t.close()
  })

  it('is never compiled, however costly its plan looks', async () => {
    let sql = ''
    let params: unknown[] = []
    const recording: Queryable = {
      query: async (s, p) => {
        sql = s
        params = p ?? []
        return t.db.query(s, p)
      },
      exec: (s) => t.db.exec(s),
    }
    await listChargesWithDetails(recording, { accountId: t.account.id, livemode: false }, { limit: 20 })
    const plan = await t.db.transaction(async (tx) => {
      // every plan past the threshold, as the page's is on a large store
      await tx.query('SET LOCAL jit_above_cost = 0')
      const res = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE) ${sql}`, params)
      return res.rows.map((r) => r['QUERY PLAN']).join('\n')
    })
    expect(plan).toContain('Index Scan Backward using charges_list')
    expect(plan).not.toContain('JIT:')
    expect((await t.db.query<{ jit: string }>('SHOW jit')).rows[0]?.jit).toBe('off')
  })
})
