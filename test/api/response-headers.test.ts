import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, buildApp, cardSource, client, REDIRECT, type Reply, type TestApp, testApp } from '../helpers/app.js'

const ADMIN = 'admin-token-for-header-tests-0123'

let t: TestApp
beforeAll(async () => {
  t = await testApp({}, { adminToken: ADMIN })
})
afterAll(() => t.close())

/** nosniff and no-store, and the hosted pages' no-referrer when `hosted`. */
function expectGuarded(name: string, res: { headers: Record<string, unknown> }, hosted = false) {
  expect(res.headers['x-content-type-options'], name).toBe('nosniff')
  expect(res.headers['cache-control'], name).toBe('no-store')
  if (hosted) expect(res.headers['referrer-policy'], name).toBe('no-referrer')
}

describe('headers every answer carries', () => {
  it('X-Content-Type-Options: nosniff on answers of routes, refusals, the framework and the documents', async () => {
    const answers: Reply[] = [
      await t.sk.get('/v2/me'),
      await t.anon.get('/v2/me'),
      await t.sk.get('/v2/nowhere'),
      await t.sk.get('/v2/charges/%E0%A4%A'),
      await t.sk.post('/v2/customers/', 'text', { 'content-type': 'text/plain' }),
      await t.pk.post('/v2/sources/', cardSource()),
      await t.anon.get('/v2/openapi.json'),
      await t.anon.get('/v2/docs'),
    ]
    expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 400, 415, 200, 200, 200])
    for (const res of answers) expect(res.headers['x-content-type-options'], res.text).toBe('nosniff')
  })

  it('Cache-Control: no-store on /v2/me and on every answer to a key, but not on the documents', async () => {
    const me = await t.sk.get('/v2/me')
    expect(me.body.webhook_secret_test ?? me.text).toBeDefined()
    expect(me.headers['cache-control']).toBe('no-store')
    for (const res of [
      await t.sk.get('/v2/charges/'),
      await t.sk.get('/v2/customers/cus_00000000000000000000000000000000'),
      await t.sk.post('/v2/customers/', { description: 'no email' }),
      await t.pk.post('/v2/sources/', cardSource()),
      await t.pk.get('/v2/charges/'),
      await t.anon.get('/v2/me'),
    ]) {
      expect(res.headers['cache-control'], res.text).toBe('no-store')
    }
    expect((await t.anon.get('/v2/openapi.json')).headers['cache-control']).not.toBe('no-store')
  })
})

describe('headers of the answers no route writes', () => {
  it('nosniff and no-store on a HEAD, a 413, a 405 and the 201 of POST /v2/accounts', async () => {
    const head = await t.app.inject({
      method: 'HEAD',
      url: '/v2/me',
      headers: { authorization: basic(t.account.sk_test_key) },
    })
    expect(head.statusCode).toBe(200)
    expectGuarded('HEAD', head)
    const tooLarge = await t.sk.post('/v2/customers/', { email: 'big@example.com', description: 'x'.repeat(70_000) })
    expect(tooLarge.status, tooLarge.text).toBe(413)
    expectGuarded('413', tooLarge)
    const notAllowed = await t.sk.put('/v2/me', {})
    expect(notAllowed.status, notAllowed.text).toBe(405)
    expectGuarded('405', notAllowed)
    const account = await t.anon.post('/v2/accounts', { name: 'Header shop' }, { authorization: `Bearer ${ADMIN}` })
    expect(account.status, account.text).toBe(201)
    expect(account.body.sk_test_key).toMatch(/^sk_test_/)
    expectGuarded('POST /v2/accounts', account)
  })

  it("a 429: nosniff and no-store on an API path; under the hosted path the pages' no-referrer too", async () => {
    // a second app on the same store, limited to one request a minute per key or address
    const limited = await buildApp(t.db, t.vault, {}, { rateLimit: { max: 1, windowMs: 60_000 } })
    try {
      const sk = client(limited.app, t.account.sk_test_key)
      expect((await sk.get('/v2/me')).status).toBe(200)
      const api = await sk.get('/v2/me')
      expect(api.status).toBe(429)
      expectGuarded('API 429', api)
      const anon = client(limited.app)
      const page = '/v2/hosted/charges/ch_00000000000000000000000000000000?token=0'
      expect((await anon.get(page)).status).not.toBe(429)
      const hosted = await anon.get(page)
      expect(hosted.status).toBe(429)
      expect(String(hosted.headers['content-type'])).toMatch(/^text\/html/)
      expectGuarded('hosted 429', hosted, true)
    } finally {
      await limited.app.close()
    }
  })

  it("the hosted page's 303 back to the shop: nosniff, no-store, no-referrer", async () => {
    const src = await t.sk.post('/v2/sources/', { ...cardSource({ number: '4000000000003220' }), redirect: REDIRECT })
    const ch = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    expect(ch.body.status).toBe('pending')
    const url = new URL(ch.body.source.action.url)
    const token = url.searchParams.get('token') as string
    const res = await t.anon.post(url.pathname, new URLSearchParams({ token, decision: 'approve' }).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.success)
    expectGuarded('hosted 303', res, true)
  })
})

describe('the API reference page', () => {
  it('has a content security policy that lets its own scripts and styles render it and nothing else', async () => {
    const page = await t.anon.get('/v2/docs')
    expect(page.status).toBe(200)
    expect(String(page.headers['content-type'])).toMatch(/^text\/html/)
    const csp = String(page.headers['content-security-policy'])
    for (const rule of ["default-src 'self'", "script-src 'self'", "object-src 'none'", "frame-ancestors 'none'"]) {
      expect(csp).toContain(rule)
    }
    expect(csp).not.toMatch(/script-src[^;]*unsafe/)
    // every script the page runs is a file of the service, allowed by script-src 'self'
    const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBeGreaterThan(0)
    for (const [, attrs, inline] of scripts) {
      expect(inline?.trim()).toBe('')
      const src = /src="([^"]+)"/.exec(attrs ?? '')?.[1] as string
      expect(src).toMatch(/^\/v2\/docs\//)
      const file = await t.anon.get(src)
      expect(file.status, src).toBe(200)
      expect(String(file.headers['content-type'])).toMatch(/javascript/)
    }
  })
})
