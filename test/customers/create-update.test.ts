import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type TestApp, testApp } from '../helpers/app.js'
import { expectError, expectRefused } from '../helpers/expect.js'
import { customerSteps } from './customer-harness.js'

/**
 * Create a customer, update it with PUT and delete it, through HTTP: the fields kept, each bound
 * at its edge and one past it, and what a refused change leaves.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const { uniqueEmail, newCustomer, newSource } = customerSteps(() => t)

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

  it('a metadata key with a line break is kept and shown like any other, and its value checked', async () => {
    const metadata = { 'order\nref': 'A-1', 'x\u2028y': 2, 'note\r': true }
    const c = await newCustomer({ metadata })
    expect(c.metadata).toEqual(metadata)
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.metadata).toEqual(metadata)
    const updated = await t.sk.put(`/v2/customers/${c.id}`, { metadata: { 'a\nb': 'c' } })
    expect(updated.body.metadata).toEqual({ 'a\nb': 'c' })
    const charge = await t.sk.post('/v2/charges/', {
      amount: 100,
      currency: 'usd',
      source: (await newSource()).id,
      metadata,
    })
    expect(charge.body.metadata).toEqual(metadata)
    expect((await t.sk.get(`/v2/charges/${charge.body.id}`)).body.metadata).toEqual(metadata)
    // the value under such a key obeys the rules of every value
    for (const value of [{ nested: 1 }, 'v'.repeat(501), null]) {
      const res = await t.sk.put(`/v2/customers/${c.id}`, { metadata: { 'a\nb': value } })
      expect(res.status, JSON.stringify(value)).toBe(422)
    }
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body.metadata).toEqual({ 'a\nb': 'c' })
  })

  it('metadata defaults to an empty object and mobile_number is optional', async () => {
    const c = await newCustomer()
    expect(c.metadata).toEqual({})
    expect(c.mobile_number).toBeUndefined()
  })

  it('email is required and must be an email address', async () => {
    expectRefused(await t.sk.post('/v2/customers/', { description: 'x' }), ['body', 'email'], 'parameter_missing')
    for (const email of ['', 'not-an-email', 'a@', '@example.com', 'a b@example.com']) {
      expectRefused(
        await t.sk.post('/v2/customers/', { email, description: 'x' }),
        ['body', 'email'],
        'parameter_invalid',
      )
    }
  })

  it('an email holding a card number is 422, as an address on a source is, and is not echoed', async () => {
    const res = await t.sk.post('/v2/customers/', { email: '4111111111111111@example.com', description: 'x' })
    expectRefused(res, ['body', 'email'], 'parameter_invalid')
    expect(res.text).not.toContain('4111111111111111')
  })

  it('an email holding a card number is named beside the problems its schema finds', async () => {
    const res = await t.sk.post('/v2/customers/', { email: '4111111111111111@example.com' })
    expect(res.status).toBe(422)
    const locs = res.body.error.detail.map((d: { loc: string[] }) => d.loc.join('.'))
    expect(locs).toEqual(expect.arrayContaining(['body.description', 'body.email']))
    expect(locs).toHaveLength(2)
    expect(res.text).not.toContain('4111111111111111')
    // a body that is no object, or an email that is no string, is the schema's alone to name
    expectRefused(await t.sk.post('/v2/customers/', [1]), ['body'])
    expectRefused(await t.sk.post('/v2/customers/', { email: 4111111111111111, description: 'x' }), ['body', 'email'])
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
      expectRefused(
        await t.sk.post('/v2/customers/', { email: uniqueEmail(), description: 'd'.repeat(n) }),
        ['body', 'description'],
        'parameter_invalid',
      )
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
        'parameter_invalid',
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
      expectRefused(
        await t.sk.put(`/v2/customers/${c.id}`, { mobile_number: '8'.repeat(n) }),
        ['body', 'mobile_number'],
        'parameter_invalid',
      )
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
      expectRefused(
        await t.sk.put(`/v2/customers/${c.id}`, { description: 'f'.repeat(n) }),
        ['body', 'description'],
        'parameter_invalid',
      )
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
    expectRefused(
      await t.sk.put(`/v2/customers/${c.id}`, { mobile_number: 1234567 }),
      ['body', 'mobile_number'],
      'parameter_invalid',
    )
    expectRefused(
      await t.sk.put(`/v2/customers/${c.id}`, { metadata: { a: { b: 1 } } }),
      ['body', 'metadata', 'a'],
      'parameter_invalid',
    )
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
