import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, client, type Reply, type TestApp, testApp } from '../helpers/app.js'
import { expectError, expectRefused } from '../helpers/expect.js'
import { customerSteps } from './customer-harness.js'

/**
 * Find customers: the list newest first and its paging, retrieve by id, and lookup by email.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { uniqueEmail, newCustomer, newSource } = customerSteps(() => t)

describe('GET /v2/customers/ (list)', () => {
  let lister: Client
  let ids: string[] // newest first
  beforeAll(async () => {
    // an account of its own, so that no other test's customers show up
    const account = await t.app.services.accounts.create('Lister')
    const sk = client(t.app, account.sk_test_key)
    ids = []
    for (let i = 0; i < 25; i++) {
      const res = await sk.post('/v2/customers/', { email: `list${i}@example.com`, description: `n${i}` })
      expect(res.status).toBe(201)
      ids.unshift(res.body.id)
    }
    // a live customer and another account's customer never show up
    await client(t.app, account.sk_live_key).post('/v2/customers/', { email: 'live@example.com', description: 'x' })
    lister = sk
  })

  it('is newest first, 20 by default, with next as a relative path', async () => {
    const res = await lister.get('/v2/customers/')
    expect(res.status).toBe(200)
    expect(res.body.object).toBe('list')
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 20))
    expect(res.body.data[0].description).toBe('n24')
    expect(res.body.next).toBe(`/v2/customers/?start_after=${ids[19]}`)
    for (const c of res.body.data) expect(c.livemode).toBe(false)

    const rest = await lister.get(res.body.next)
    expect(rest.status).toBe(200)
    expect(rest.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(20))
    expect(rest.body.next).toBeNull()
  })

  it('pages with limit and start_after; next keeps limit and the pages join up exactly', async () => {
    const seen: string[] = []
    let path: string | null = '/v2/customers/?limit=7'
    let pages = 0
    while (path) {
      const res: Reply = await lister.get(path)
      expect(res.status).toBe(200)
      expect(res.body.data.length).toBeLessThanOrEqual(7)
      seen.push(...res.body.data.map((c: { id: string }) => c.id))
      if (res.body.next) {
        expect(res.body.next).toMatch(/^\/v2\/customers\/\?start_after=cus_[0-9a-f]{32}&limit=7$/)
      }
      path = res.body.next
      pages++
    }
    expect(pages).toBe(4)
    expect(seen).toEqual(ids)
  })

  it('next is null when the last page is exactly full', async () => {
    const all = await lister.get('/v2/customers/?limit=25')
    expect(all.body.data).toHaveLength(25)
    expect(all.body.next).toBeNull()
    const almost = await lister.get('/v2/customers/?limit=24')
    expect(almost.body.next).toBe(`/v2/customers/?start_after=${ids[23]}&limit=24`)
    const last = await lister.get(almost.body.next)
    expect(last.body.data.map((c: { id: string }) => c.id)).toEqual([ids[24]])
    expect(last.body.next).toBeNull()
  })

  it('start_after starts after the customer named', async () => {
    const res = await lister.get(`/v2/customers/?start_after=${ids[4]}&limit=3`)
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(5, 8))
    const end = await lister.get(`/v2/customers/?start_after=${ids[24]}`)
    expect(end.body.data).toEqual([])
    expect(end.body.next).toBeNull()
  })

  it('limit takes 1 to 100; out of range or not an integer is 422', async () => {
    expect((await lister.get('/v2/customers/?limit=1')).body.data.map((c: { id: string }) => c.id)).toEqual([ids[0]])
    expect((await lister.get('/v2/customers/?limit=100')).body.data).toHaveLength(25)
    for (const limit of ['0', '101', '-1', '1.5', 'abc', '']) {
      expectRefused(await lister.get(`/v2/customers/?limit=${limit}`), ['query', 'limit'], 'parameter_invalid')
    }
  })

  it('an unknown or foreign start_after is 400 with param start_after', async () => {
    const otherAccount = await t.app.services.accounts.create('Other')
    const foreign = await newCustomer({}, client(t.app, otherAccount.sk_test_key))
    const liveOne = await newCustomer({}, t.skLive)
    const src = await newSource()
    const cursors = ['cus_00000000000000000000000000000000', 'nope', foreign.id, liveOne.id, src.id]
    // no length makes a cursor a malformed query: it names no customer, like any other
    for (const cursor of [...cursors, '', `cus_${'0'.repeat(200)}`]) {
      const res = await lister.get(`/v2/customers/?start_after=${cursor}`)
      expectError(res, 400, 'cursor_invalid')
      expect(res.body.error.param).toBe('start_after')
    }
  })

  it('an unknown query parameter is 422', async () => {
    expectRefused(await lister.get('/v2/customers/?page=2'), ['query', 'page'], 'parameter_unknown')
  })

  it('shows each customer with its attached sources', async () => {
    const c = await newCustomer()
    const s = await newSource()
    expect((await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })).status).toBe(200)
    const res = await t.sk.get('/v2/customers/?limit=100')
    const listed = res.body.data.find((x: { id: string }) => x.id === c.id)
    expect(listed.sources.map((x: { id: string }) => x.id)).toEqual([s.id])
  })
})

describe('GET /v2/customers/:id', () => {
  it('returns the customer; an unknown id is 404 resource_missing', async () => {
    const c = await newCustomer({ mobile_number: '12345' })
    const res = await t.sk.get(`/v2/customers/${c.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual(c)
    expectError(await t.sk.get('/v2/customers/cus_00000000000000000000000000000000'), 404, 'resource_missing')
    expectError(await t.sk.get('/v2/customers/nope'), 404, 'resource_missing')
    // an id of any length that names nothing is a 404, never a 422 about its length
    for (const n of [101, 250]) {
      expectError(await t.sk.get(`/v2/customers/cus_${'0'.repeat(n)}`), 404, 'resource_missing')
    }
    expect((await t.sk.get(`/v2/customers/cus_${'0'.repeat(400)}`)).status).toBe(404)
  })
})

describe('GET /v2/customers/by_email/:email', () => {
  it('returns the newest customer with that email', async () => {
    const email = uniqueEmail('twice')
    const older = await newCustomer({ email, description: 'older' })
    const newer = await newCustomer({ email, description: 'newer' })
    await newCustomer({ description: 'someone else' })
    const res = await t.sk.get(`/v2/customers/by_email/${encodeURIComponent(email)}`)
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(newer.id)
    expect(res.body.description).toBe('newer')
    expect(res.body.id).not.toBe(older.id)

    await t.sk.delete(`/v2/customers/${newer.id}`)
    expect((await t.sk.get(`/v2/customers/by_email/${encodeURIComponent(email)}`)).body.id).toBe(older.id)
  })

  it('finds an email with + and other characters that need encoding', async () => {
    const email = `ann+shop.${Date.now()}@example.com`
    const c = await newCustomer({ email })
    const res = await t.sk.get(`/v2/customers/by_email/${encodeURIComponent(email)}`)
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(c.id)
  })

  it('compares emails without regard to case', async () => {
    const stamp = Date.now()
    const c = await newCustomer({ email: `Ann.Case.${stamp}@Example.COM` })
    const res = await t.sk.get(`/v2/customers/by_email/ann.case.${stamp}@example.com`)
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(c.id)
    expect(res.body.email).toBe(`Ann.Case.${stamp}@Example.COM`)
  })

  it('an unknown email is 404', async () => {
    expectError(await t.sk.get('/v2/customers/by_email/nobody@example.com'), 404, 'resource_missing')
  })
})
