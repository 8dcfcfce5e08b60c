import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, client, type Json, type Reply, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { chargeSteps, sourceBody } from './charge-harness.js'

/**
 * Every operation on a charge that is not there for the caller: an unknown id, another account's
 * charge, the other mode's charge; each is a 404 that changes nothing.
 */

let t: TestApp
/** a second account of the same service: its charges must be invisible to the first */
let other: Client
beforeAll(async () => {
  t = await testApp()
  const acct = await t.app.services.accounts.create('Other shop')
  other = client(t.app, acct.sk_test_key)
})
afterAll(() => t.close())
const { created, getCharge } = chargeSteps(() => t)

describe('charges that are not there', () => {
  const UNKNOWN = 'ch_00000000000000000000000000000000'
  const operations: [string, (as: Client, id: string) => Promise<Reply>][] = [
    ['retrieve', (as, id) => as.get(`/v2/charges/${id}`)],
    ['capture', (as, id) => as.post(`/v2/charges/${id}/capture`)],
    ['void', (as, id) => as.post(`/v2/charges/${id}/void`)],
    ['refund', (as, id) => as.post(`/v2/charges/${id}/refund`)],
    ['verify', (as, id) => as.post(`/v2/charges/${id}/verify`, { confirmation_id: 'conf_xxxxx', otp: '123456' })],
    ['test authorize', (as, id) => as.post(`/v2/test/charges/${id}/authorize`, { decision: 'approve' })],
  ]

  it.each(operations)('%s of an unknown charge id is 404', async (_name, op) => {
    expectError(await op(t.sk, UNKNOWN), 404, 'resource_missing')
    expectError(await op(t.sk, 'ch_nope'), 404, 'resource_missing')
  })

  it.each(operations)("%s of another account's charge is 404 and changes nothing", async (_name, op) => {
    const held = await created(sourceBody('card'), { capture: false })
    const pending = await created(sourceBody('wallet_a'))
    for (const c of [held, pending]) {
      const res = await op(other, c.id)
      expectError(res, 404, 'resource_missing')
      expect(res.text).not.toContain('Test account')
      expect(await getCharge(c.id)).toEqual(c)
    }
  })

  it.each(operations.filter(([name]) => name !== 'test authorize'))(
    "%s of the other mode's charge is 404 and changes nothing",
    async (_name, op) => {
      const held = await created(sourceBody('card'), { capture: false })
      expectError(await op(t.skLive, held.id), 404, 'resource_missing')
      expect(await getCharge(held.id)).toEqual(held)
    },
  )

  it("lists show neither another account's nor the other mode's charges", async () => {
    const mine = await created(sourceBody('card'))
    const theirs = await other.get('/v2/charges/?limit=100')
    expect(theirs.status).toBe(200)
    expect(theirs.body.data.map((c: Json) => c.id)).not.toContain(mine.id)
    const live = await t.skLive.get('/v2/charges/?limit=100')
    expect(live.body.data.map((c: Json) => c.id)).not.toContain(mine.id)
  })
})
