import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type Reply, type TestApp, testApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

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
