import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type Json, REDIRECT, type TestApp, testApp } from '../helpers/app.js'

/**
 * The lists' own filters: charges by `status`, events and deliveries by `charge`. Each keeps its
 * filter in `next`, pages like the unfiltered list, and sees only the caller's account and mode.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const NOTIFY = 'http://127.0.0.1:9/never-called'
const ids = (list: Json) => list.data.map((o: { id: string }) => o.id)

async function charge(number: string, extra: Record<string, unknown> = {}, redirect?: object): Promise<Json> {
  const src = await t.sk.post('/v2/sources/', { ...cardSource({ number }), ...(redirect ? { redirect } : {}) })
  const ch = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, ...extra })
  expect(ch.status).toBe(201)
  return ch.body
}

describe('charges by status', () => {
  it('lists only the charges in that status, newest first, paging with the filter kept in next', async () => {
    const succeeded = [await charge('4242424242424242'), await charge('4242424242424242')]
    const failed = await charge('4000000000000002')
    const voided = await charge('4242424242424242', { capture: false })
    expect((await t.sk.post(`/v2/charges/${voided.id}/void`)).body.status).toBe('voided')
    const refunded = await charge('4242424242424242')
    expect((await t.sk.post(`/v2/charges/${refunded.id}/refund`)).body.status).toBe('refunded')
    const pending = await charge('4000000000003220', {}, REDIRECT)
    expect(pending.status).toBe('pending')
    const third = await charge('4242424242424242')

    const all = await t.sk.get('/v2/charges/?limit=100')
    for (const [status, expected] of [
      ['failed', [failed.id]],
      ['voided', [voided.id]],
      ['refunded', [refunded.id]],
      ['pending', [pending.id]],
    ] as const) {
      const res = await t.sk.get(`/v2/charges/?status=${status}`)
      expect(res.status).toBe(200)
      expect(ids(res.body)).toEqual(expected)
      // the same objects as the unfiltered list shows
      expect(res.body.data[0]).toEqual(all.body.data.find((c: { id: string }) => c.id === expected[0]))
    }

    const first = await t.sk.get('/v2/charges/?status=succeeded&limit=2')
    expect(ids(first.body)).toEqual([third.id, succeeded[1].id])
    expect(first.body.next).toBe(`/v2/charges/?start_after=${succeeded[1].id}&limit=2&status=succeeded`)
    const second = await t.sk.get(first.body.next)
    expect(ids(second.body)).toEqual([succeeded[0].id])
    expect(second.body.next).toBeNull()
    // a cursor of another status is a charge of the list all the same
    const after = await t.sk.get(`/v2/charges/?status=succeeded&start_after=${refunded.id}`)
    expect(ids(after.body)).toEqual(succeeded.map((c) => c.id).reverse())
  })

  it('sees no other mode; an unknown status is 422 naming the parameter', async () => {
    expect((await t.skLive.get('/v2/charges/?status=succeeded')).body.data).toEqual([])
    const bad = await t.sk.get('/v2/charges/?status=done')
    expect(bad.status).toBe(422)
    expect(bad.body.error.detail[0].loc).toEqual(['query', 'status'])
  })
})

describe('events and deliveries of a charge', () => {
  it("list that charge's only, oldest last, and page with the filter kept", async () => {
    const notified = { ...REDIRECT, notify: NOTIFY }
    const ch = await charge('4242424242424242', { capture: false }, notified)
    const other = await charge('4242424242424242', {}, notified)
    await t.sk.post(`/v2/charges/${ch.id}/capture`, { amount: 600 })
    await t.sk.post(`/v2/charges/${ch.id}/refund`, { amount: 100 })
    await t.sk.post(`/v2/charges/${ch.id}/refund`, { amount: 200 })

    const events = await t.sk.get(`/v2/events/?charge=${ch.id}`)
    expect(events.status).toBe(200)
    expect(events.body.data.map((e: Json) => e.type)).toEqual([
      'charge.refunded',
      'charge.refunded',
      'charge.captured',
      'charge.succeeded',
    ])
    for (const e of events.body.data) expect(e.data.object.id).toBe(ch.id)

    const paged = await t.sk.get(`/v2/events/?charge=${ch.id}&limit=3`)
    expect(paged.body.next).toBe(`/v2/events/?start_after=${ids(paged.body)[2]}&limit=3&charge=${ch.id}`)
    expect(ids((await t.sk.get(paged.body.next)).body)).toEqual(ids(events.body).slice(3))

    const deliveries = await t.sk.get(`/v2/deliveries/?charge=${ch.id}`)
    expect(deliveries.status).toBe(200)
    expect(deliveries.body.data.map((d: Json) => d.event)).toEqual(ids(events.body))
    const others = await t.sk.get(`/v2/deliveries/?charge=${other.id}`)
    expect(others.body.data).toHaveLength(1)

    // another mode, or a charge that is not one, lists nothing
    expect((await t.skLive.get(`/v2/events/?charge=${ch.id}`)).body.data).toEqual([])
    expect((await t.sk.get('/v2/deliveries/?charge=ch_nothing')).body.data).toEqual([])
  })
})
