import { describe, expect, it } from 'vitest'
import { expectError } from '../helpers/expect.js'
import { newCustomer, newSource, otherPk, otherSk, t, useAccountsApp } from './auth-harness.js'

/** What another account or another mode sees through HTTP: 404, never 403, and nothing changed. */

useAccountsApp()

describe('another account, another mode: 404', () => {
  it("another account's source is 404 with its secret or public key", async () => {
    const theirs = await newSource(otherSk)
    for (const c of [t.sk, t.pk]) {
      const res = await c.get(`/v2/sources/${theirs}`)
      expectError(res, 404, 'resource_missing')
      expect(res.body.error.type).toBe('not_found_error')
    }
    // while its owner sees it
    expect((await otherPk.get(`/v2/sources/${theirs}`)).status).toBe(200)
  })

  it("another account's customer is 404 on every operation, and is left as it was", async () => {
    const theirs = await newCustomer(otherSk, 'theirs@example.com')
    const mine = await newCustomer(t.sk, 'mine@example.com')
    const mySource = await newSource()
    const theirSource = await newSource(otherSk)

    expectError(await t.sk.get(`/v2/customers/${theirs}`), 404, 'resource_missing')
    expectError(await t.sk.put(`/v2/customers/${theirs}`, { description: 'hijacked' }), 404, 'resource_missing')
    expectError(await t.sk.delete(`/v2/customers/${theirs}`), 404, 'resource_missing')
    expectError(await t.sk.post(`/v2/customers/${theirs}/sources`, { source: mySource }), 404, 'resource_missing')
    expectError(await t.sk.post(`/v2/customers/${mine}/sources`, { source: theirSource }), 404, 'resource_missing')
    expectError(await t.sk.get('/v2/customers/by_email/theirs@example.com'), 404, 'resource_missing')
    const paged = await t.sk.get(`/v2/customers/?start_after=${theirs}`)
    expectError(paged, 400, 'cursor_invalid')
    expect(paged.body.error.param).toBe('start_after')
    const list = await t.sk.get('/v2/customers/?limit=100')
    expect(list.body.data.map((c: { id: string }) => c.id)).not.toContain(theirs)

    const seen = await otherSk.get(`/v2/customers/${theirs}`)
    expect(seen.status).toBe(200)
    expect(seen.body.description).toBe('a customer')
    expect(seen.body.sources).toEqual([])
    expect((await t.sk.get(`/v2/sources/${mySource}`)).body.used).toBe(false)
    expect((await otherSk.get(`/v2/sources/${theirSource}`)).body.used).toBe(false)
    expect((await t.sk.get(`/v2/customers/${mine}`)).body.sources).toEqual([])
  })

  it("the other mode's source or customer is 404", async () => {
    const testSource = await newSource(t.sk)
    const liveSource = await newSource(t.skLive)
    expectError(await t.skLive.get(`/v2/sources/${testSource}`), 404, 'resource_missing')
    expectError(await t.pkLive.get(`/v2/sources/${testSource}`), 404, 'resource_missing')
    expectError(await t.sk.get(`/v2/sources/${liveSource}`), 404, 'resource_missing')
    expectError(await t.pk.get(`/v2/sources/${liveSource}`), 404, 'resource_missing')

    const testCustomer = await newCustomer(t.sk, 'mode@example.com')
    const liveCustomer = await newCustomer(t.skLive, 'mode@example.com')
    expectError(await t.skLive.get(`/v2/customers/${testCustomer}`), 404, 'resource_missing')
    expectError(await t.sk.get(`/v2/customers/${liveCustomer}`), 404, 'resource_missing')
    expectError(await t.skLive.put(`/v2/customers/${testCustomer}`, { description: 'x' }), 404, 'resource_missing')
    expectError(await t.skLive.delete(`/v2/customers/${testCustomer}`), 404, 'resource_missing')
    expectError(
      await t.skLive.post(`/v2/customers/${liveCustomer}/sources`, { source: testSource }),
      404,
      'resource_missing',
    )
    expectError(await t.skLive.get(`/v2/customers/?start_after=${testCustomer}`), 400, 'cursor_invalid')
    expect((await t.skLive.get('/v2/customers/by_email/mode@example.com')).body.id).toBe(liveCustomer)
    expect((await t.sk.get('/v2/customers/by_email/mode@example.com')).body.id).toBe(testCustomer)
    expect((await t.sk.get(`/v2/sources/${testSource}`)).body.used).toBe(false)
  })

  it("detach with another account's or mode's customer or source is 404 and changes nothing", async () => {
    const attached = async (c: typeof t.sk, email: string) => {
      const cus = await newCustomer(c, email)
      const src = await newSource(c)
      expect((await c.post(`/v2/customers/${cus}/sources`, { source: src })).status).toBe(200)
      return { cus, src }
    }
    const mine = await attached(t.sk, 'detach.mine@example.com')
    const theirs = await attached(otherSk, 'detach.theirs@example.com')
    const live = await attached(t.skLive, 'detach.live@example.com')
    for (const [c, { cus, src }] of [
      [t.sk, theirs],
      [t.sk, { cus: mine.cus, src: theirs.src }],
      [t.sk, { cus: theirs.cus, src: mine.src }],
      [otherSk, mine],
      [t.skLive, mine],
      [t.skLive, { cus: live.cus, src: mine.src }],
      [t.sk, live],
      [t.sk, { cus: mine.cus, src: live.src }],
    ] as const) {
      expectError(await c.delete(`/v2/customers/${cus}/sources/${src}`), 404, 'resource_missing')
    }
    // each source is still its customer's, with the card number a detach would erase
    for (const [c, { cus, src }] of [
      [t.sk, mine],
      [otherSk, theirs],
      [t.skLive, live],
    ] as const) {
      expect((await c.get(`/v2/customers/${cus}`)).body.sources.map((s: { id: string }) => s.id)).toEqual([src])
    }
    const kept = await t.db.query<{ id: string }>(
      'SELECT id FROM sources WHERE id = ANY($1::text[]) AND card_number_enc IS NOT NULL',
      [[mine.src, theirs.src, live.src]],
    )
    expect(kept.rows).toHaveLength(3)
  })
})
