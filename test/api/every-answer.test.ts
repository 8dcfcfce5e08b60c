import { describe, expect, it } from 'vitest'
import { ErrorEnvelope } from '../../src/schemas/common.js'
import { cardSource, type Reply } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { shapeProblems } from '../helpers/shape.js'
import { newCustomer, REQUEST_ID, t, useAccountsApp } from './auth-harness.js'

/**
 * The shape every answer has, whatever arrives: a Request-Id, the one error envelope for unknown
 * routes, malformed or non-JSON bodies, odd urls and methods, and never a 500.
 */

useAccountsApp()

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
      await t.sk.get('/v2/customers/cus_1/nothing'),
      await t.sk.post('/v2/charges/ch_1/settle', {}),
    ]) {
      expectError(res, 404, 'route_missing')
      expect(res.body.error.type).toBe('not_found_error')
      expect(res.headers.allow).toBeUndefined()
    }
  })

  it('a route some callers only have (test mode, the operator) is 404 to a wrong method too, naming none', async () => {
    for (const res of [
      await t.sk.put('/v2/test/clock', {}),
      await t.skLive.put('/v2/test/clock', {}),
      await t.sk.delete('/v2/test/scenarios'),
      await t.sk.get('/v2/test/charges/ch_1/authorize'),
      await t.anon.get('/v2/accounts'),
      await t.anon.put('/v2/accounts/acct_1', {}),
    ]) {
      expectError(res, 404, 'route_missing')
      expect(res.headers.allow).toBeUndefined()
    }
  })

  it('a route asked with a method it does not take is 405 method_not_allowed, with the methods it takes', async () => {
    const cases: [Reply, string][] = [
      [await t.sk.put('/v2/sources/', {}), 'POST'],
      [await t.sk.delete('/v2/me'), 'GET, HEAD'],
      [await t.sk.post('/v2/customers/cus_1', {}), 'GET, HEAD, PUT, DELETE'],
      [await t.sk.put('/v2/customers/cus_1/sources/', {}), 'POST'],
      [await t.sk.get('/v2/charges/ch_1/capture'), 'POST'],
      [await t.anon.delete('/v2//charges'), 'GET, HEAD, POST'],
    ]
    for (const [res, allow] of cases) {
      expectError(res, 405, 'method_not_allowed')
      expect(res.body.error.type).toBe('invalid_request_error')
      expect(new Set(String(res.headers.allow).split(', '))).toEqual(new Set(allow.split(', ')))
    }
  })

  it('malformed JSON is 400 invalid_json', async () => {
    for (const text of ['{"type":', '{type: "card"}', "{'a': 1}", '{"a":1}}', 'nul']) {
      const res = await t.sk.post('/v2/customers/', text)
      expectError(res, 400, 'invalid_json')
      expect(res.body.error.type).toBe('invalid_request_error')
    }
  })

  it('a body whose bytes are not UTF-8 is 400 invalid_json, and nothing is stored with its bytes replaced', async () => {
    const latin1 = (text: string) => Buffer.from(text, 'latin1')
    const bodies = [
      latin1('{"email":"latin1@example.com","description":"Zo\xeb"}'),
      Buffer.concat([
        Buffer.from('{"email":"latin1@example.com","description":"x'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]),
    ]
    for (const [body, type] of [
      [bodies[0], 'application/json'],
      [bodies[1], 'application/json'],
      [bodies[0], 'application/json; charset=iso-8859-1'],
    ] as const) {
      const res = await t.sk.post('/v2/customers/', body, { 'content-type': type })
      expectError(res, 400, 'invalid_json')
      expect(res.body.error.message).toMatch(/UTF-8/)
    }
    expect((await t.sk.get('/v2/customers/by_email/latin1@example.com')).status).toBe(404)
    // the same text sent as UTF-8 is taken
    const utf8 = Buffer.from('{"email":"latin1@example.com","description":"Zoë"}', 'utf8')
    const taken = await t.sk.post('/v2/customers/', utf8)
    expect(taken.status, taken.text).toBe(201)
    expect(taken.body.description).toBe('Zoë')
  })

  it('a key that would reach a prototype is valid JSON refused with a 422 naming where it is', async () => {
    const cases: [string, string][] = [
      ['{"email":"proto@example.com","description":"x","metadata":{"__proto__":"v"}}', 'metadata.__proto__'],
      [
        '{"email":"proto@example.com","description":"x","metadata":{"constructor":{"prototype":"v"}}}',
        'metadata.constructor.prototype',
      ],
      ['{"__proto__":{"admin":true},"email":"proto@example.com","description":"x"}', '__proto__'],
    ]
    for (const [text, param] of cases) {
      const res = await t.sk.post('/v2/customers/', text)
      expectError(res, 422, 'parameter_invalid')
      expect(res.body.error.param).toBe(param)
      expect(res.body.error.detail).toEqual([expect.objectContaining({ loc: ['body', ...param.split('.')] })])
    }
    expect((await t.sk.get('/v2/customers/by_email/proto@example.com')).status).toBe(404)
    // however deep it is
    const deep = `${'['.repeat(8000)}{"__proto__":1}${']'.repeat(8000)}`
    const nested = await t.sk.post(
      '/v2/customers/',
      `{"email":"proto@example.com","description":"x","metadata":${deep}}`,
    )
    expectError(nested, 422, 'parameter_invalid')
    // named as far as a name is shown: it is cut at 200 characters
    expect(nested.body.error.param).toMatch(/^metadata(\.0)+\.?…$/)
    // a key named constructor is an ordinary key
    const plain = await t.sk.post('/v2/customers/', {
      email: 'proto@example.com',
      description: 'x',
      metadata: { constructor: 'v' },
    })
    expect(plain.status, plain.text).toBe(201)
    expect(plain.body.metadata).toEqual({ constructor: 'v' })
  })

  it('an operation that takes no fields refuses a body with one (422 parameter_unknown) and does nothing', async () => {
    const customer = (await t.sk.post('/v2/customers/', { email: 'nobody@example.com', description: 'x' })).body
    const source = (await t.sk.post('/v2/sources/', cardSource())).body
    expect((await t.sk.post(`/v2/customers/${customer.id}/sources`, { source: source.id })).status).toBe(200)
    const withBody = async (url: string, payload: string | undefined) => {
      const res = await t.app.inject({
        method: 'DELETE',
        url,
        headers: { authorization: `Bearer ${t.account.sk_test_key}`, 'content-type': 'application/json' },
        ...(payload === undefined ? {} : { payload }),
      })
      return { status: res.statusCode, body: res.json() }
    }
    const detach = `/v2/customers/${customer.id}/sources/${source.id}`
    for (const url of [detach, `/v2/customers/${customer.id}`]) {
      const refused = await withBody(url, '{"bogus":1}')
      expect(refused.status).toBe(422)
      expect(refused.body.error).toMatchObject({ code: 'parameter_unknown', param: 'bogus' })
    }
    expect((await t.sk.get(`/v2/customers/${customer.id}`)).body.sources).toHaveLength(1)
    // no body, an empty one, or {}: the operation runs
    expect((await withBody(detach, '{}')).status).toBe(200)
    expect((await withBody(`/v2/customers/${customer.id}`, '')).status).toBe(200)
  })

  it('an operation that takes no query refuses a parameter (422 parameter_unknown), as lists refuse theirs', async () => {
    const source = (await t.sk.post('/v2/sources/', cardSource())).body
    const customer = (await t.sk.post('/v2/customers/', { email: 'noquery@example.com', description: 'x' })).body
    for (const path of [
      `/v2/sources/${source.id}`,
      `/v2/customers/${customer.id}`,
      '/v2/customers/by_email/noquery@example.com',
      '/v2/me',
      '/v2/test/clock',
    ]) {
      const refused = await t.sk.get(`${path}?expand=source`)
      expectError(refused, 422, 'parameter_unknown', 'expand')
      expect(refused.body.error.detail[0].loc).toEqual(['query', 'expand'])
      expect((await t.sk.get(path)).status, path).toBe(200)
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
