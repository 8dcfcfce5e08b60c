import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ErrorEnvelope } from '../../src/schemas/common.js'
import type { AccountKeys } from '../../src/services/accounts.js'
import { basic, type Client, cardSource, client, REDIRECT, type Reply, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { shapeProblems } from '../helpers/shape.js'

/**
 * Keys, accounts and modes through HTTP: who may call what, what another account or another mode
 * sees (404, never 403), the account of a key, and the shape every answer has (Request-Id, the one
 * error envelope, never a 500).
 */

let t: TestApp
let other: AccountKeys
let otherSk: Client
let otherPk: Client
beforeAll(async () => {
  t = await testApp()
  other = await t.app.services.accounts.create('Other')
  otherSk = client(t.app, other.sk_test_key)
  otherPk = client(t.app, other.pk_test_key)
})
afterAll(() => t.close())

const REQUEST_ID = /^req_[0-9a-f]{24}$/

const newCustomer = async (c: Client = t.sk, email = 'ann@example.com') => {
  const res = await c.post('/v2/customers/', { email, description: 'a customer' })
  expect(res.status, res.text).toBe(201)
  return res.body.id as string
}
const newSource = async (c: Client = t.sk) => {
  const res = await c.post('/v2/sources/', cardSource())
  expect(res.status, res.text).toBe(200)
  return res.body.id as string
}
const customerCount = async () =>
  Number((await t.db.query<{ n: number }>('SELECT count(*) AS n FROM customers')).rows[0]?.n)

describe('authentication', () => {
  it('no key is 401 authentication_required, on every kind of route', async () => {
    for (const res of [
      await t.anon.get('/v2/me'),
      await t.anon.post('/v2/sources/', cardSource()),
      await t.anon.get('/v2/sources/src_00000000000000000000000000000000'),
      await t.anon.get('/v2/customers/'),
      await t.anon.post('/v2/customers/', { email: 'a@example.com', description: 'x' }),
    ]) {
      expectError(res, 401, 'authentication_required')
      expect(res.body.error.type).toBe('authentication_error')
    }
  })

  it('an Authorization header without a usable scheme is 401', async () => {
    for (const authorization of [
      t.account.sk_test_key,
      `Token ${t.account.sk_test_key}`,
      'Bearer ',
      'Basic ',
      `Basic ${Buffer.from(`:${t.account.sk_test_key}`).toString('base64')}`,
    ]) {
      const res = await t.anon.get('/v2/me', { authorization })
      expect(res.status, authorization).toBe(401)
      expect(res.body.error.type).toBe('authentication_error')
    }
  })

  it('an unknown or malformed key is 401 api_key_invalid', async () => {
    const unknown = [
      `sk_test_${'a'.repeat(32)}`,
      `pk_live_${'B'.repeat(32)}`,
      'hello',
      'sk_test_short',
      `${t.account.sk_test_key}x`,
      t.account.sk_test_key.slice(0, -1),
      t.account.sk_test_key.toUpperCase(),
      t.account.webhook_secret_test,
    ]
    for (const key of unknown) {
      expectError(await t.anon.get('/v2/me', { authorization: `Bearer ${key}` }), 401, 'api_key_invalid')
      expectError(await t.anon.get('/v2/me', { authorization: basic(key) }), 401, 'api_key_invalid')
    }
    expectError(await client(t.app, 'sk_test_nope').post('/v2/sources/', cardSource()), 401, 'api_key_invalid')
  })

  it('Basic (key as user name, empty password) and Bearer both work', async () => {
    for (const authorization of [
      basic(t.account.sk_test_key),
      `Bearer ${t.account.sk_test_key}`,
      `bearer ${t.account.sk_test_key}`,
      `BASIC ${Buffer.from(`${t.account.sk_test_key}:`).toString('base64')}`,
    ]) {
      const res = await t.anon.get('/v2/me', { authorization })
      expect(res.status, authorization).toBe(200)
      expect(res.body.id).toBe(t.account.id)
    }
    const viaBearer = await t.anon.post('/v2/sources/', cardSource(), {
      authorization: `Bearer ${t.account.pk_live_key}`,
    })
    expect(viaBearer.status).toBe(200)
    expect(viaBearer.body.livemode).toBe(true)
  })

  it('secret keys are not stored in plain text', async () => {
    const rows = [
      ...(await t.db.query('SELECT row_to_json(x)::text AS j FROM api_keys x')).rows,
      ...(await t.db.query('SELECT row_to_json(x)::text AS j FROM accounts x')).rows,
    ].map((r) => String((r as { j: string }).j))
    expect(rows.length).toBeGreaterThan(2)
    for (const secret of [t.account.sk_test_key, t.account.sk_live_key, other.sk_test_key]) {
      for (const row of rows) expect(row).not.toContain(secret)
    }
  })
})

describe('public and secret keys', () => {
  it('a public key on a secret-only operation is 403 secret_key_required, and does nothing', async () => {
    const cus = await newCustomer()
    const src = await newSource()
    const before = await customerCount()
    for (const pk of [t.pk, t.pkLive]) {
      const calls: Reply[] = [
        await pk.post('/v2/customers/', { email: 'pk@example.com', description: 'by a public key' }),
        await pk.get('/v2/customers/'),
        await pk.get(`/v2/customers/${cus}`),
        await pk.put(`/v2/customers/${cus}`, { description: 'changed' }),
        await pk.delete(`/v2/customers/${cus}`),
        await pk.get('/v2/customers/by_email/ann@example.com'),
        await pk.post(`/v2/customers/${cus}/sources`, { source: src }),
        await pk.delete(`/v2/customers/${cus}/sources/${src}`),
        await pk.get('/v2/me'),
        await pk.post('/v2/me/webhook_secret/roll'),
      ]
      for (const res of calls) {
        expectError(res, 403, 'secret_key_required')
        expect(res.body.error.type).toBe('permission_error')
      }
    }
    expect(await customerCount()).toBe(before)
    const still = await t.sk.get(`/v2/customers/${cus}`)
    expect(still.body.description).toBe('a customer')
    expect(still.body.sources).toEqual([])
    expect((await t.sk.get(`/v2/sources/${src}`)).body.used).toBe(false)
  })

  it('a public key creates and retrieves sources, of its own mode', async () => {
    const created = await t.pk.post('/v2/sources/', cardSource())
    expect(created.status).toBe(200)
    expect(created.body.livemode).toBe(false)
    expect((await t.pk.get(`/v2/sources/${created.body.id}`)).body).toEqual(created.body)
    expect((await t.sk.get(`/v2/sources/${created.body.id}`)).body).toEqual(created.body)

    const bySecret = await newSource(t.sk)
    expect((await t.pk.get(`/v2/sources/${bySecret}`)).status).toBe(200)

    const live = await t.pkLive.post('/v2/sources/', { type: 'wallet_b', redirect: REDIRECT })
    expect(live.status).toBe(200)
    expect(live.body.livemode).toBe(true)
    expect((await t.skLive.get(`/v2/sources/${live.body.id}`)).status).toBe(200)
  })
})

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
})

describe('GET /v2/me', () => {
  it('returns the account of the key: id, name and both public keys', async () => {
    const res = await t.sk.get('/v2/me')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      object: 'account',
      id: t.account.id,
      name: 'Test account',
      pk_test_key: t.account.pk_test_key,
      pk_live_key: t.account.pk_live_key,
      livemode: false,
    })
    expect(res.body.id).toMatch(/^acct_[0-9a-f]{32}$/)
    expect(res.text).not.toContain(t.account.sk_test_key)
    expect(res.text).not.toContain(t.account.sk_live_key)

    const live = await t.skLive.get('/v2/me')
    expect(live.body).toMatchObject({ id: t.account.id, livemode: true, pk_live_key: t.account.pk_live_key })

    const theirs = await otherSk.get('/v2/me')
    expect(theirs.body).toMatchObject({ id: other.id, name: 'Other', pk_test_key: other.pk_test_key })
  })
})

describe('every answer', () => {
  it('carries a Request-Id, different for each request, on successes and errors alike', async () => {
    const answers: Reply[] = [
      await t.sk.get('/v2/me'),
      await t.sk.post('/v2/customers/', { email: 'rid@example.com', description: 'x' }),
      await t.anon.get('/v2/me'),
      await t.pk.get('/v2/me'),
      await t.sk.get('/v2/customers/cus_00000000000000000000000000000000'),
      await t.sk.get('/v2/no/such/route'),
      await t.anon.get('/v3/anything'),
      await t.sk.post('/v2/sources/', { type: 'card' }),
      await t.sk.post('/v2/sources/', '{"type":'),
      await t.anon.get('/v2/openapi.json'),
    ]
    const ids = answers.map((a) => a.headers['request-id'])
    for (const id of ids) expect(id).toMatch(REQUEST_ID)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('an unknown route is 404 route_missing in the error envelope', async () => {
    for (const res of [
      await t.sk.get('/v2/nothing'),
      await t.anon.get('/nothing'),
      await t.sk.put('/v2/sources/', {}),
      await t.sk.delete('/v2/me'),
    ]) {
      expectError(res, 404, 'route_missing')
      expect(res.body.error.type).toBe('not_found_error')
    }
  })

  it('malformed JSON is 400 invalid_json', async () => {
    for (const text of ['{"type":', '{type: "card"}', "{'a': 1}", '{"a":1}}', 'nul', '{"__proto__":{"admin":true}}']) {
      const res = await t.sk.post('/v2/customers/', text)
      expectError(res, 400, 'invalid_json')
      expect(res.body.error.type).toBe('invalid_request_error')
    }
  })

  it('a body that is not JSON is 415, whatever it holds', async () => {
    const json = JSON.stringify({ email: 'text@example.com', description: 'sent as text' })
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'text/html']) {
      const res = await t.sk.post('/v2/customers/', json, { 'content-type': type })
      expectError(res, 415, 'unsupported_media_type')
    }
    expect((await t.sk.get('/v2/customers/by_email/text@example.com')).status).toBe(404)
  })

  it('JSON with a charset parameter is JSON', async () => {
    const res = await t.sk.post(
      '/v2/customers/',
      { email: 'charset@example.com', description: 'x' },
      {
        'content-type': 'application/json; charset=utf-8',
      },
    )
    expect(res.status).toBe(201)
  })

  it('a URL that cannot be decoded is a 4xx in the error envelope, with a Request-Id', async () => {
    const res = await t.sk.get('/v2/sources/%E0%A4%A')
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(shapeProblems(ErrorEnvelope, res.body), res.text).toEqual([])
    expect(res.body.error.type).toBe('invalid_request_error')
    expect(res.headers['request-id']).toMatch(REQUEST_ID)
  })

  it('an over-long path parameter is a 4xx in the error envelope, with a Request-Id', async () => {
    const res = await t.sk.get(`/v2/sources/src_${'a'.repeat(400)}`)
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(shapeProblems(ErrorEnvelope, res.body), res.text).toEqual([])
    expect(res.headers['request-id']).toMatch(REQUEST_ID)
  })

  it('a method no route has is a 4xx in the error envelope, never a 500', async () => {
    for (const method of ['PATCH', 'OPTIONS', 'TRACE', 'SEARCH', 'QUERY', 'PROPFIND']) {
      const res = await t.app.inject({
        method: method as 'GET',
        url: '/v2/customers/',
        headers: { authorization: `Bearer ${t.account.sk_test_key}` },
      })
      expect(res.statusCode, `${method}: ${res.body}`).toBeGreaterThanOrEqual(400)
      expect(res.statusCode, `${method}: ${res.body}`).toBeLessThan(500)
      expect(shapeProblems(ErrorEnvelope, JSON.parse(res.body)), res.body).toEqual([])
      expect(res.headers['request-id']).toMatch(REQUEST_ID)
    }
  })

  it('never a 500, whatever arrives; errors keep the one envelope', async () => {
    const logsBefore = t.logs.length
    const cus = await newCustomer(t.sk, 'odd@example.com')
    const odd: Reply[] = [
      await t.sk.post('/v2/customers/', '[]'),
      await t.sk.post('/v2/customers/', 'null'),
      await t.sk.post('/v2/customers/', '"text"'),
      await t.sk.post('/v2/customers/', '12'),
      await t.sk.post('/v2/customers/', `${'['.repeat(20000)}${']'.repeat(20000)}`),
      await t.sk.post('/v2/customers/', { email: 'a@example.com', description: 'x'.repeat(70_000) }),
      await t.sk.post('/v2/customers/', '{"constructor":{"prototype":{"x":1}}}'),
      await t.sk.post('/v2/customers/', { email: 'a@example.com', description: 'nul \u0000 here' }),
      await t.sk.post('/v2/customers/', '{"email":"a@example.com","description":"lone \\ud800"}'),
      await t.sk.post('/v2/customers/', '{"email":"a@example.com","description":"x","metadata":{"n":1e999}}'),
      await t.sk.post('/v2/customers/', { email: 'a@example.com', description: 'x', metadata: { 'k\u0000': 1 } }),
      await t.sk.post('/v2/sources/', { ...cardSource(), owner: { name: 'nul \u0000' } }),
      await t.sk.post('/v2/sources/', { type: 'card', card: 'a string' }),
      await t.sk.post('/v2/sources/', { type: ['card'] }),
      await t.sk.put(`/v2/customers/${cus}`, { metadata: { a: { nested: true } } }),
      await t.sk.put(`/v2/customers/${cus}`, { metadata: [1, 2] }),
      await t.sk.put(`/v2/customers/${cus}`, 'null'),
      await t.sk.get('/v2/customers/cus_%00'),
      await t.sk.get('/v2/sources/src_%00x'),
      await t.sk.get('/v2/customers/by_email/a%00b'),
      await t.sk.get('/v2/customers/?start_after=cus_%00'),
      await t.sk.get('/v2/customers/?limit=1e3'),
      await t.sk.get('/v2/customers/?limit=-1'),
      await t.sk.get('/v2/customers/?limit=1&limit=2'),
      await t.sk.get('/v2/customers/?start_after='),
      await t.sk.get("/v2/customers/cus_' OR '1'='1"),
      await t.sk.get(`/v2/customers/by_email/${'a'.repeat(300)}`),
      await t.sk.post(`/v2/customers/${cus}/sources`, { source: 'src_\u0000' }),
      await t.sk.post(`/v2/customers/${cus}/sources`, { source: 12 }),
      await t.sk.delete(`/v2/customers/${cus}/sources/src_%00`),
      await t.anon.get('/v2/me', { authorization: 'Basic !!!!' }),
      await t.anon.get('/v2/me', { authorization: `Basic ${'A'.repeat(5000)}` }),
      await t.anon.get('/v2/me', { authorization: `Bearer ${'x'.repeat(5000)}` }),
    ]
    for (const res of odd) {
      expect(res.status, res.text).toBeLessThan(500)
      expect(res.status, res.text).toBeGreaterThanOrEqual(400)
      expect(shapeProblems(ErrorEnvelope, res.body), res.text).toEqual([])
      expect(res.text).not.toMatch(/stack|at .*\.ts:\d+|node_modules/)
      expect(res.headers['request-id']).toMatch(REQUEST_ID)
    }
    // nothing of the refused requests was stored
    const list = await t.sk.get('/v2/customers/?limit=100')
    expect(list.body.data.map((c: { email: string }) => c.email)).not.toContain('a@example.com')
    expect((await t.sk.get(`/v2/customers/${cus}`)).body.metadata).toEqual({})
    const errors = t.logs.slice(logsBefore).filter((line) => JSON.parse(line).level >= 50)
    expect(errors).toEqual([])
  })
})
