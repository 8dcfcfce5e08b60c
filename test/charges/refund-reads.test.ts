import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type Json, type TestApp, testApp } from '../helpers/app.js'

/**
 * A charge read while refunds of it are being made (by another instance, on PostgreSQL) is the
 * charge of one moment: its amount_refunded is the sum of its refunds that have not failed.
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

const refundedByItsRefunds = (c: Json) =>
  c.refunds.filter((r: Json) => r.status !== 'failed').reduce((sum: number, r: Json) => sum + r.amount, 0)

describe('retrieving a charge while it is being refunded', () => {
  it('shows amount_refunded equal to its refunds not failed, in every read', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const charge = (await t.sk.post('/v2/charges/', { amount: 100_000, currency: 'usd', source: src.body.id })).body
    let refunding = true
    const refunds = (async () => {
      for (let i = 0; i < 60; i++) await twin.sk.post(`/v2/charges/${charge.id}/refund`, { amount: 1 })
      refunding = false
    })()
    const torn: Json[] = []
    let reads = 0
    const readers = Array.from({ length: 4 }, async () => {
      while (refunding) {
        const got = (await t.sk.get(`/v2/charges/${charge.id}`)).body
        reads++
        if (got.amount_refunded !== refundedByItsRefunds(got)) {
          torn.push({ amount_refunded: got.amount_refunded, refunds: got.refunds.length })
        }
      }
    })
    await Promise.all([refunds, ...readers])
    expect(reads).toBeGreaterThan(60)
    expect(torn).toEqual([])
    const final = (await t.sk.get(`/v2/charges/${charge.id}`)).body
    expect(final).toMatchObject({ amount_refunded: 60 })
    expect(final.refunds).toHaveLength(60)
  })
})
