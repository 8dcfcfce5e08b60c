import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SCENARIOS } from '../../src/domain/scenarios.js'
import { type Json, keptKey, type TestApp, testApp } from '../helpers/app.js'

/**
 * A scenario run whose answer was never given (its process died once it had made everything, or
 * the answer was lost), sent again with its Idempotency-Key, carries on from what the first run
 * made: it makes nothing twice, moves the test clock once, and answers the same objects.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: 3_600_000 } })
})
afterAll(() => t.close())

/** How many of each object the account has, and how far its clock has moved. */
async function made() {
  const count = async (table: string) =>
    Number((await t.db.query(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [t.account.id])).rows[0]?.n)
  const refunds = await t.db.query(
    'SELECT count(*) AS n FROM refunds r JOIN charges c ON c.id = r.charge_id WHERE c.account_id = $1',
    [t.account.id],
  )
  return {
    sources: await count('sources'),
    customers: await count('customers'),
    charges: await count('charges'),
    events: await count('events'),
    refunds: Number(refunds.rows[0]?.n),
    clock: (await t.sk.get('/v2/test/clock')).body.offset_seconds,
  }
}

const idsOf = (objects: Record<string, Json>) =>
  Object.fromEntries(Object.entries(objects).map(([name, o]) => [name, o.id ?? o.offset_seconds]))

describe('a scenario run sent again with its Idempotency-Key after its answer was lost', () => {
  it.each(SCENARIOS.map((s) => [s.name, s.overrides.includes('customer')] as const))(
    '%s makes nothing twice',
    async (name, takesCustomer) => {
      const key = `retry-${name}`
      // a new customer too, where the scenario takes one
      const overrides = takesCustomer ? { customer: { email: `${name}@example.com`, description: name } } : {}
      const first = await t.sk.post(`/v2/test/scenarios/${name}`, overrides, { 'idempotency-key': key })
      expect(first.status, first.text).toBe(200)
      const after = await made()
      // the process died before its answer was kept: the key's claim has lapsed
      await t.db.query(
        `UPDATE idempotency_keys SET status_code = NULL, response_body = NULL, locked_until = now() - interval '1 second'
       WHERE key = $1`,
        [keptKey(t, key)],
      )
      const again = await t.sk.post(`/v2/test/scenarios/${name}`, overrides, { 'idempotency-key': key })
      expect(again.status, again.text).toBe(200)
      expect(again.headers['idempotent-replayed']).toBeUndefined()
      expect(await made()).toEqual(after)
      expect(idsOf(again.body.objects)).toEqual(idsOf(first.body.objects))
      expect(again.body.objects.charge?.status).toBe(first.body.objects.charge?.status)
    },
  )
})
