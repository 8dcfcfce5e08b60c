import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { basic, buildApp, client, type TestApp, testApp } from '../helpers/app.js'

const REDIS_URL = process.env.REDIS_URL

describe('rate limiting per key, in one process', () => {
  let t: TestApp
  afterAll(() => t?.close())

  it('answers 429 with Retry-After in the error envelope past the limit, and counts keys apart', async () => {
    t = await testApp({}, { rateLimit: { max: 5, windowMs: 60_000 } })
    for (let i = 0; i < 5; i++) expect((await t.sk.get('/v2/me')).status).toBe(200)
    const limited = await t.sk.get('/v2/me')
    expect(limited.status).toBe(429)
    expect(limited.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.headers['request-id']).toMatch(/^req_/)
    // a refused request does nothing: this POST would have made a customer
    const refused = await t.sk.post('/v2/customers/', { email: 'x@example.com', description: 'x' })
    expect(refused.status).toBe(429)
    // the other keys of the account have their own counts
    expect((await t.skLive.get('/v2/me')).status).toBe(200)
    expect(
      (
        await t.pk.post('/v2/sources/', {
          type: 'qr_a',
          redirect: { success: 'https://a.example/', fail: 'https://a.example/f' },
        })
      ).status,
    ).toBe(200)
    const customers = await t.db.query('SELECT count(*)::int AS n FROM customers')
    expect((customers.rows[0] as { n: number }).n).toBe(0)
  })
})

describe('rate limiting requests without a valid key', () => {
  it('counts them by address before any key is looked up: past the limit they get 429, not 401', async () => {
    const t = await testApp({}, { rateLimit: { max: 3, windowMs: 60_000 } })
    try {
      const anonymous = client(t.app)
      const statuses: number[] = []
      for (let i = 0; i < 5; i++) statuses.push((await anonymous.get('/v2/me')).status)
      expect(statuses).toEqual([401, 401, 401, 429, 429])
      const limited = await anonymous.post('/v2/customers/', { email: 'x@example.com', description: 'x' })
      expect(limited.status).toBe(429)
      expect(limited.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
      // a valid key has a count of its own
      expect((await t.sk.get('/v2/me')).status).toBe(200)
    } finally {
      await t.close()
    }
  })
})

/** One request from a given client address, with a given Authorization header (or none). */
async function from(
  t: TestApp,
  address: string,
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  authorization?: string,
  body?: object,
) {
  const res = await t.app.inject({
    method,
    url,
    remoteAddress: address,
    headers: { ...(authorization ? { authorization } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    payload: body ? JSON.stringify(body) : undefined,
  })
  return res.statusCode
}

const QR_SOURCE = { type: 'qr_a', redirect: { success: 'https://a.example/', fail: 'https://a.example/f' } }

describe('rate limiting the published public key', () => {
  it('counts it per client address: a flood from one address blocks neither checkout elsewhere nor the secret key', async () => {
    const t = await testApp({}, { rateLimit: { max: 5, windowMs: 60_000 } })
    try {
      const pk = basic(t.account.pk_test_key)
      const flood: number[] = []
      for (let i = 0; i < 8; i++) flood.push(await from(t, '203.0.113.9', 'GET', '/v2/sources/src_0', pk))
      expect(flood.slice(0, 5)).toEqual([404, 404, 404, 404, 404])
      expect(flood.slice(5)).toEqual([429, 429, 429])
      // a payer elsewhere still pays
      expect(await from(t, '198.51.100.7', 'POST', '/v2/sources/', pk, QR_SOURCE)).toBe(200)
      // and the merchant's secret key, from the flooding address too, is untouched
      const sk = basic(t.account.sk_test_key)
      expect(await from(t, '203.0.113.9', 'GET', '/v2/me', sk)).toBe(200)
      expect(await from(t, '198.51.100.7', 'GET', '/v2/me', sk)).toBe(200)
      // an IPv6 client is one client for its whole /64
      for (let i = 0; i < 5; i++)
        expect(await from(t, `2001:db8:1:2::${i + 1}`, 'GET', '/v2/sources/src_0', pk)).toBe(404)
      expect(await from(t, '2001:db8:1:2::99', 'GET', '/v2/sources/src_0', pk)).toBe(429)
    } finally {
      await t.close()
    }
  })

  it('keeps one count per secret key, wherever its requests come from', async () => {
    const t = await testApp({}, { rateLimit: { max: 4, windowMs: 60_000 } })
    try {
      const sk = basic(t.account.sk_test_key)
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) statuses.push(await from(t, `198.51.100.${i + 1}`, 'GET', '/v2/me', sk))
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429])
    } finally {
      await t.close()
    }
  })
})

describe('rate limiting made-up keys', () => {
  it('counts requests by address where the route takes no key, whatever Authorization they carry', async () => {
    const t = await testApp({}, { rateLimit: { max: 3, windowMs: 60_000 } })
    try {
      const statuses: number[] = []
      for (let i = 0; i < 5; i++)
        statuses.push(await from(t, '203.0.113.20', 'GET', '/v2/openapi.json', `Bearer junk${i}`))
      expect(statuses).toEqual([200, 200, 200, 429, 429])
      // even a real key's: a document is not the key's to count
      expect(await from(t, '203.0.113.20', 'GET', '/v2/openapi.json', basic(t.account.sk_test_key))).toBe(429)
      expect(await from(t, '203.0.113.21', 'GET', '/v2/openapi.json', 'Bearer junk')).toBe(200)
    } finally {
      await t.close()
    }
  })

  it("counts keys not of a key's shape by address, on routes that take a key", async () => {
    const t = await testApp({}, { rateLimit: { max: 3, windowMs: 60_000 } })
    try {
      const statuses: number[] = []
      for (const junk of [
        'Bearer a',
        'Bearer b',
        'Basic eDp5',
        'Bearer sk_test_short',
        'Bearer pk_nope_x',
        'Weird c',
      ]) {
        statuses.push(await from(t, '203.0.113.30', 'GET', '/v2/charges/', junk))
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429])
      expect(await from(t, '203.0.113.30', 'GET', '/v2/charges/', basic(t.account.sk_test_key))).toBe(200)
    } finally {
      await t.close()
    }
  })
})

describe('rate limiting requests no route answers', () => {
  /** The answers, in order, to `n` requests from one address. */
  async function answers(t: TestApp, address: string, n: number, method: 'GET' | 'PUT', url: (i: number) => string) {
    const all: Awaited<ReturnType<TestApp['app']['inject']>>[] = []
    for (let i = 0; i < n; i++) all.push(await t.app.inject({ method, url: url(i), remoteAddress: address }))
    return all
  }

  it('counts unknown routes by address: past the limit, 429 in the envelope with Retry-After', async () => {
    const t = await testApp({}, { rateLimit: { max: 3, windowMs: 60_000 } })
    try {
      const res = await answers(t, '203.0.113.40', 5, 'GET', (i) => `/v2/nothing/${i}`)
      expect(res.map((r) => r.statusCode)).toEqual([404, 404, 404, 429, 429])
      const limited = res[4] as (typeof res)[number]
      expect(limited.json().error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
      expect(limited.headers['request-id']).toMatch(/^req_/)
      // the address's count is one: a route that exists is refused too, and another address is not
      expect(await from(t, '203.0.113.40', 'GET', '/v2/openapi.json')).toBe(429)
      expect(await from(t, '203.0.113.49', 'GET', '/v2/nothing')).toBe(404)
      // a secret key keeps its own count even at an unknown route of the flooding address
      expect(await from(t, '203.0.113.40', 'GET', '/v2/me', basic(t.account.sk_test_key))).toBe(200)
    } finally {
      await t.close()
    }
  })

  it('counts a wrong method at a path that exists (405) by address', async () => {
    const t = await testApp({}, { rateLimit: { max: 3, windowMs: 60_000 } })
    try {
      const res = await answers(t, '203.0.113.41', 5, 'PUT', () => '/v2/sources/')
      expect(res.map((r) => r.statusCode)).toEqual([405, 405, 405, 429, 429])
      expect((res[4] as (typeof res)[number]).json().error.code).toBe('rate_limited')
    } finally {
      await t.close()
    }
  })

  it('counts hosted pages that find nothing, answered as pages', async () => {
    const t = await testApp({}, { rateLimit: { max: 3, windowMs: 60_000 } })
    try {
      const res = await answers(t, '203.0.113.42', 5, 'GET', () => `/v2/hosted/charges/ch_${'0'.repeat(32)}?token=x`)
      expect(res.map((r) => r.statusCode)).toEqual([404, 404, 404, 429, 429])
      expect(Number((res[4] as (typeof res)[number]).headers['retry-after'])).toBeGreaterThan(0)
      // an address under the hosted pages that no route takes: a payer's browser gets a page there too
      const unrouted = await answers(t, '203.0.113.44', 5, 'GET', () => '/v2/hosted/nothing')
      expect(unrouted.map((r) => r.statusCode)).toEqual([404, 404, 404, 429, 429])
      const limited = unrouted[4] as (typeof unrouted)[number]
      expect(limited.headers['content-type']).toMatch(/^text\/html/)
      expect(limited.headers['referrer-policy']).toBe('no-referrer')
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    } finally {
      await t.close()
    }
  })

  it('without a limit configured, unknown routes are answered as ever', async () => {
    const t = await testApp()
    try {
      const res = await answers(t, '203.0.113.43', 3, 'GET', () => '/v2/nothing')
      expect(res.map((r) => r.statusCode)).toEqual([404, 404, 404])
      expect(res[0]?.json().error.code).toBe('route_missing')
    } finally {
      await t.close()
    }
  })
})

// Shared counts need Redis; CI runs the suite with REDIS_URL set on its PostgreSQL pass.
describe.runIf(REDIS_URL)('rate limiting shared across processes through Redis', () => {
  it('two app instances on one Redis share one count per key', async () => {
    const redisA = new Redis(REDIS_URL as string)
    const redisB = new Redis(REDIS_URL as string)
    const namespace = `jackdaw-test-${randomBytes(4).toString('hex')}:`
    const t = await testApp({}, { rateLimit: { max: 6, windowMs: 60_000, redis: redisA, namespace } })
    const other = await buildApp(
      await t.store.connect(),
      t.vault,
      {},
      {
        rateLimit: { max: 6, windowMs: 60_000, redis: redisB, namespace },
      },
    )
    try {
      const b = client(other.app, t.account.sk_test_key)
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) {
        statuses.push((await t.sk.get('/v2/me')).status)
        statuses.push((await b.get('/v2/me')).status)
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(6)
      expect(statuses.slice(6)).toEqual([429, 429])
    } finally {
      await other.app.close()
      await t.close()
      redisA.disconnect()
      redisB.disconnect()
    }
  })

  it('lets requests through when Redis cannot be reached', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    })
    dead.on('error', () => {})
    const t = await testApp({}, { rateLimit: { max: 1, windowMs: 60_000, redis: dead } })
    try {
      expect((await t.sk.get('/v2/me')).status).toBe(200)
      expect((await t.sk.get('/v2/me')).status).toBe(200)
    } finally {
      await t.close()
      dead.disconnect()
    }
  })
})
