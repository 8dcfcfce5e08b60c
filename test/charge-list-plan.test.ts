import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listChargeVersions } from '../src/store/charges.js'
import { cardSource, type TestApp, testApp } from './helpers/app.js'

/**
 * A batched statement's generic plan counts on a hundred rows in its batch, and with a few hundred
 * thousand charges the page of charges' estimate passed PostgreSQL's jit_above_cost: the plan was
 * then compiled in every execution, about 10 ms for a statement that runs in under one
 * (bench/README.md, eighteenth round). The store's connections run without JIT.
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
    await listChargeVersions(
      {
        query: async (s, p) => {
          sql = s
          params = p ?? []
          return t.db.query(s, p)
        },
        exec: (s) => t.db.exec(s),
      },
      [{ scope: { accountId: t.account.id, livemode: false }, page: { limit: 20 } }],
    )
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
