import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, client, REDIRECT, type Reply, type TestApp, testApp } from '../helpers/app.js'

/**
 * Customers through HTTP: create, list and its paging, retrieve, the seed's PUT update, delete,
 * lookup by email, and attaching and detaching sources, including a race of attaches across two
 * processes on PostgreSQL.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

let seq = 0
const uniqueEmail = (tag = 'c') => `${tag}.${++seq}.${Date.now()}@example.com`

async function newCustomer(fields: Record<string, unknown> = {}, c: Client = t.sk) {
  const res = await c.post('/v2/customers/', { email: uniqueEmail(), description: 'A customer', ...fields })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function newSource(c: Client = t.sk, body: unknown = cardSource()) {
  const res = await c.post('/v2/sources/', body)
  expect(res.status, res.text).toBe(200)
  return res.body
}

function expectRefused(res: Reply, loc: (string | number)[], code = 'parameter_invalid') {
  expect(res.status, res.text).toBe(422)
  expect(res.body.error.code).toBe(code)
  expect(res.body.error.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc)
}

function expectError(res: Reply, status: number, code: string) {
  expect(res.status, res.text).toBe(status)
  expect(res.body.error.code).toBe(code)
}

describe('POST /v2/customers/', () => {
  it('creates a customer: 201 with the fields given, no sources, livemode of the key', async () => {
    const email = uniqueEmail('new')
    const res = await t.sk.post('/v2/customers/', {
      email,
      description: 'First customer',
      mobile_number: '+63 917 555 0100',
      metadata: { plan: 'gold', seats: 3, vip: true },
    })
    expect(res.status).toBe(201)
    const c = res.body
    expect(c).toMatchObject({
      object: 'customer',
      email,
      description: 'First customer',
      mobile_number: '+63 917 555 0100',
      metadata: { plan: 'gold', seats: 3, vip: true },
      sources: [],
      livemode: false,
    })
    expect(c.id).toMatch(/^cus_[0-9a-f]{32}$/)
    expect(c.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    expect(c.updated_at).toBe(c.created_at)
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body).toEqual(c)

    const live = await t.skLive.post('/v2/customers/', { email, description: 'Live one' })
    expect(live.status).toBe(201)
    expect(live.body.livemode).toBe(true)
  })

  it('metadata comes back as sent, its keys in the order sent, when created, updated and read', async () => {
    const metadata = { zone: 'north', a: 'first', middle: 'x', b: 2 }
    const c = await newCustomer({ metadata })
    expect(JSON.stringify(c.metadata)).toBe(JSON.stringify(metadata))
    const read = await t.sk.get(`/v2/customers/${c.id}`)
    expect(Object.keys(read.body.metadata)).toEqual(['zone', 'a', 'middle', 'b'])
    const updated = await t.sk.put(`/v2/customers/${c.id}`, { metadata: { yy: 'later', x: 'last' } })
    expect(Object.keys(updated.body.metadata)).toEqual(['yy', 'x'])
    expect(Object.keys((await t.sk.get(`/v2/customers/${c.id}`)).body.metadata)).toEqual(['yy', 'x'])
  })

  it('metadata defaults to an empty object and mobile_number is optional', async () => {
    const c = await newCustomer()
    expect(c.metadata).toEqual({})
    expect(c.mobile_number).toBeUndefined()
  })

  it('email is required and must be an email address', async () => {
    expectRefused(await t.sk.post('/v2/customers/', { description: 'x' }), ['body', 'email'], 'parameter_missing')
    for (const email of ['', 'not-an-email', 'a@', '@example.com', 'a b@example.com']) {
      expectRefused(await t.sk.post('/v2/customers/', { email, description: 'x' }), ['body', 'email'])
    }
  })

  it('description is required, 1 to 255 characters', async () => {
    expectRefused(
      await t.sk.post('/v2/customers/', { email: uniqueEmail() }),
      ['body', 'description'],
      'parameter_missing',
    )
    for (const n of [1, 255]) {
      const c = await newCustomer({ description: 'd'.repeat(n) })
      expect(c.description).toBe('d'.repeat(n))
    }
    for (const n of [0, 256]) {
      expectRefused(await t.sk.post('/v2/customers/', { email: uniqueEmail(), description: 'd'.repeat(n) }), [
        'body',
        'description',
      ])
    }
  })

  it('mobile_number is 5 to 25 characters', async () => {
    for (const n of [5, 25]) {
      const c = await newCustomer({ mobile_number: '9'.repeat(n) })
      expect(c.mobile_number).toBe('9'.repeat(n))
    }
    for (const n of [4, 26, 0]) {
      expectRefused(
        await t.sk.post('/v2/customers/', { email: uniqueEmail(), description: 'x', mobile_number: '9'.repeat(n) }),
        ['body', 'mobile_number'],
      )
    }
  })

  it('metadata must be key-value pairs with scalar values', async () => {
    for (const metadata of [{ a: { b: 1 } }, { a: [1] }, { a: null }, [1, 2], 'text', { ['k'.repeat(41)]: 'v' }]) {
      const res = await t.sk.post('/v2/customers/', { email: uniqueEmail(), description: 'x', metadata })
      expect(res.status, JSON.stringify(metadata)).toBe(422)
      expect(res.body.error.detail[0].loc.slice(0, 2)).toEqual(['body', 'metadata'])
    }
  })

  it('unknown fields are 422 parameter_unknown', async () => {
    for (const field of ['name', 'sources', 'livemode', 'id']) {
      const res = await t.sk.post('/v2/customers/', { email: uniqueEmail(), description: 'x', [field]: 'v' })
      expectRefused(res, ['body', field], 'parameter_unknown')
    }
  })
})

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
      expectRefused(await lister.get(`/v2/customers/?limit=${limit}`), ['query', 'limit'])
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

describe('PUT /v2/customers/:id (update customer)', () => {
  it('changes the fields given and keeps the rest', async () => {
    const c = await newCustomer({ mobile_number: '11111', description: 'Before', metadata: { a: 1 } })
    const res = await t.sk.put(`/v2/customers/${c.id}`, { description: 'After' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      id: c.id,
      email: c.email,
      description: 'After',
      mobile_number: '11111',
      metadata: { a: 1 },
      created_at: c.created_at,
      livemode: false,
    })
    expect(res.body.updated_at >= c.updated_at).toBe(true)

    const mobile = await t.sk.put(`/v2/customers/${c.id}`, { mobile_number: '22222' })
    expect(mobile.body).toMatchObject({ description: 'After', mobile_number: '22222', metadata: { a: 1 } })

    const same = await t.sk.put(`/v2/customers/${c.id}`, {})
    expect(same.status).toBe(200)
    expect(same.body).toMatchObject({ description: 'After', mobile_number: '22222', metadata: { a: 1 } })

    expect((await t.sk.get(`/v2/customers/${c.id}`)).body).toMatchObject({
      description: 'After',
      mobile_number: '22222',
    })
  })

  it('metadata replaces the whole object', async () => {
    const c = await newCustomer({ metadata: { a: 1, b: 'two' } })
    const res = await t.sk.put(`/v2/customers/${c.id}`, { metadata: { c: true } })
    expect(res.body.metadata).toEqual({ c: true })
    const cleared = await t.sk.put(`/v2/customers/${c.id}`, { metadata: {} })
    expect(cleared.body.metadata).toEqual({})
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.metadata).toEqual({})
  })

  it('mobile_number 5 and 25 characters pass; 4 and 26 are 422', async () => {
    const c = await newCustomer({ mobile_number: '00000' })
    for (const n of [5, 25]) {
      const res = await t.sk.put(`/v2/customers/${c.id}`, { mobile_number: '7'.repeat(n) })
      expect(res.status).toBe(200)
      expect(res.body.mobile_number).toBe('7'.repeat(n))
    }
    for (const n of [4, 26]) {
      expectRefused(await t.sk.put(`/v2/customers/${c.id}`, { mobile_number: '8'.repeat(n) }), [
        'body',
        'mobile_number',
      ])
    }
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.mobile_number).toBe('7'.repeat(25))
  })

  it('description 1 and 255 characters pass; empty and 256 are 422', async () => {
    const c = await newCustomer()
    for (const n of [1, 255]) {
      const res = await t.sk.put(`/v2/customers/${c.id}`, { description: 'e'.repeat(n) })
      expect(res.status).toBe(200)
      expect(res.body.description).toBe('e'.repeat(n))
    }
    for (const n of [0, 256]) {
      expectRefused(await t.sk.put(`/v2/customers/${c.id}`, { description: 'f'.repeat(n) }), ['body', 'description'])
    }
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.description).toBe('e'.repeat(255))
  })

  it('the email cannot be changed: 422 parameter_unknown', async () => {
    const c = await newCustomer()
    const res = await t.sk.put(`/v2/customers/${c.id}`, { email: 'changed@example.com' })
    expectRefused(res, ['body', 'email'], 'parameter_unknown')
    expect(res.body.error.param).toBe('email')
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.email).toBe(c.email)
  })

  it('other unknown fields and wrong types are 422, and change nothing', async () => {
    const c = await newCustomer({ description: 'Keep' })
    expectRefused(
      await t.sk.put(`/v2/customers/${c.id}`, { description: 'New', nickname: 'x' }),
      ['body', 'nickname'],
      'parameter_unknown',
    )
    expectRefused(await t.sk.put(`/v2/customers/${c.id}`, { mobile_number: 1234567 }), ['body', 'mobile_number'])
    expectRefused(await t.sk.put(`/v2/customers/${c.id}`, { metadata: { a: { b: 1 } } }), ['body', 'metadata', 'a'])
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.description).toBe('Keep')
  })

  it('the body is required', async () => {
    const c = await newCustomer({ description: 'Keep' })
    for (const res of [
      await t.sk.put(`/v2/customers/${c.id}`),
      await t.sk.put(`/v2/customers/${c.id}`, ''),
      await t.sk.put(`/v2/customers/${c.id}`, 'null'),
      await t.sk.put(`/v2/customers/${c.id}`, '[]'),
    ]) {
      expect(res.status, res.text).toBe(422)
      expect(res.body.error.detail[0].loc).toEqual(['body'])
    }
    expectError(await t.sk.put(`/v2/customers/${c.id}`, '{"description":'), 400, 'invalid_json')
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.description).toBe('Keep')
  })

  it('an unknown id is 404', async () => {
    expectError(
      await t.sk.put('/v2/customers/cus_00000000000000000000000000000000', { description: 'x' }),
      404,
      'resource_missing',
    )
  })

  it('keeps the attached sources', async () => {
    const c = await newCustomer()
    const s = await newSource()
    await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })
    const res = await t.sk.put(`/v2/customers/${c.id}`, { description: 'With card' })
    expect(res.body.sources.map((x: { id: string }) => x.id)).toEqual([s.id])
  })
})

describe('DELETE /v2/customers/:id', () => {
  it('answers {id, object, deleted}, and the customer is then 404', async () => {
    const c = await newCustomer()
    const s = await newSource()
    await t.sk.post(`/v2/customers/${c.id}/sources`, { source: s.id })
    const res = await t.sk.delete(`/v2/customers/${c.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: c.id, object: 'customer', deleted: true })
    expectError(await t.sk.get(`/v2/customers/${c.id}`), 404, 'resource_missing')
    expectError(await t.sk.delete(`/v2/customers/${c.id}`), 404, 'resource_missing')
    expectError(await t.sk.put(`/v2/customers/${c.id}`, { description: 'x' }), 404, 'resource_missing')
    const list = await t.sk.get('/v2/customers/?limit=100')
    expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(c.id)
    // its source stays used: a single-use source is not freed by deleting its customer
    const src = await t.sk.get(`/v2/sources/${s.id}`)
    expect(src.status).toBe(200)
    expect(src.body.used).toBe(true)
    const reuse = await t.sk.post(`/v2/customers/${(await newCustomer()).id}/sources`, { source: s.id })
    expectError(reuse, 400, 'source_used')
  })

  it('an unknown id is 404', async () => {
    expectError(await t.sk.delete('/v2/customers/cus_00000000000000000000000000000000'), 404, 'resource_missing')
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
