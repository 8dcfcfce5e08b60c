import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { newApiKey } from '../../src/domain/keys.js'
import { countedAddress } from '../../src/http/auth-failures.js'
import {
  type AppExtras,
  buildApp,
  cardSource,
  type Json,
  later,
  REDIRECT,
  recordingDb,
  type TestApp,
  testApp,
} from '../helpers/app.js'

const REDIS_URL = process.env.REDIS_URL

/** A key of the right shape that no account has. */
const unknownKey = () => newApiKey('secret', false)

interface Answer {
  status: number
  body: Json
  headers: Record<string, unknown>
}

/** One request with a key, from an address, as a client there would send it. */
async function call(
  app: App,
  key: string | undefined,
  opts: {
    address?: string
    headers?: Record<string, string>
    method?: 'GET' | 'POST'
    url?: string
    body?: object
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers }
  if (key) headers.authorization = `Bearer ${key}`
  if (opts.body) headers['content-type'] = 'application/json'
  const res = await app.inject({
    method: opts.method ?? 'GET',
    url: opts.url ?? '/v2/me',
    headers,
    payload: opts.body ? JSON.stringify(opts.body) : undefined,
    remoteAddress: opts.address ?? '127.0.0.1',
  })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

/** An app over `t`'s store whose statements are recorded, so that a key lookup can be seen or not. */
async function recordedApp(t: TestApp, extras: AppExtras) {
  const statements: string[] = []
  const { app } = await buildApp(recordingDb(t.db, statements), t.vault, {}, extras)
  const lookups = () => statements.filter((s) => s.includes('FROM api_keys WHERE key_hash')).length
  return { app, lookups }
}

function expectRefused(res: Answer) {
  expect(res.status).toBe(429)
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
  expect(res.body.error.message).toMatch(/unknown API keys from this address/)
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
}

describe('unknown keys counted by client address', () => {
  it('past the limit, refuses the address with 429 before any lookup; keys known valid go on', async () => {
    const t = await testApp()
    const { app, lookups } = await recordedApp(t, { authFailures: { max: 3, windowSeconds: 60 } })
    try {
      // the account's test secret key is looked up once and then known
      expect((await call(app, t.account.sk_test_key)).status).toBe(200)
      expect(lookups()).toBe(1)
      for (let i = 0; i < 3; i++) {
        const res = await call(app, unknownKey())
        expect(res.status).toBe(401)
        expect(res.body.error.code).toBe('api_key_invalid')
      }
      expect(lookups()).toBe(4)

      const refused = await call(app, unknownKey())
      expectRefused(refused)
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60)
      // a refused request wrote nothing: this one would have made a customer
      const write = await call(app, unknownKey(), {
        method: 'POST',
        url: '/v2/customers/',
        body: { email: 'a@example.com', description: 'x' },
      })
      expectRefused(write)
      // a valid key this process has not seen yet is refused too, without a lookup
      expectRefused(await call(app, t.account.sk_live_key))
      expect(lookups()).toBe(4)

      // the key already known goes on working from the same address, after its cached entry has
      // gone stale too: it is looked up again, not refused as unknown
      expect((await call(app, t.account.sk_test_key)).status).toBe(200)
      expect(lookups()).toBe(4)
      await later(30_000, async () => {
        expect((await call(app, t.account.sk_test_key)).status).toBe(200)
        expect(lookups()).toBe(5)
        expectRefused(await call(app, unknownKey()))
      })
      // other addresses have counts of their own
      const elsewhere = await call(app, unknownKey(), { address: '10.0.0.2' })
      expect(elsewhere.status).toBe(401)
      expect((await call(app, t.account.sk_live_key, { address: '10.0.0.2' })).status).toBe(200)
      expect(lookups()).toBe(7)

      const customers = await t.db.query('SELECT count(*)::int AS n FROM customers')
      expect((customers.rows[0] as { n: number }).n).toBe(0)
    } finally {
      await app.close()
      await t.close()
    }
  })

  it('counts a lookup from before it starts: requests sent at once cannot pass the limit together', async () => {
    const t = await testApp()
    const { app, lookups } = await recordedApp(t, { authFailures: { max: 20, windowSeconds: 60 } })
    try {
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => call(app, unknownKey(), { address: '203.0.113.9' })),
      )
      const statuses = answers.map((a) => a.status)
      expect(statuses.filter((s) => s === 401)).toHaveLength(20)
      expect(statuses.filter((s) => s === 429)).toHaveLength(180)
      expect(lookups()).toBe(20)
      // a valid key looked up gives its count back: 28 keys this process has not seen, from one address
      const accounts = [t.account]
      for (let i = 0; i < 6; i++) accounts.push(await t.app.services.accounts.create(`Shop ${i}`))
      const keys = accounts.flatMap((a) => [a.sk_test_key, a.pk_test_key, a.sk_live_key, a.pk_live_key])
      const other = '203.0.113.10'
      const before = lookups()
      // a public key is known and then refused for this operation, which needs a secret one
      for (const key of keys) {
        expect((await call(app, key, { address: other })).status).toBe(key.startsWith('pk_') ? 403 : 200)
      }
      expect(lookups() - before).toBe(28)
      expect((await call(app, unknownKey(), { address: other })).status).toBe(401)
    } finally {
      await app.close()
      await t.close()
    }
  })

  it('does not count keys of the wrong shape or requests without a key: neither is looked up', async () => {
    const t = await testApp({}, { authFailures: { max: 2, windowSeconds: 60 } })
    try {
      for (const key of ['sk_test_short', 'not-a-key', `x${newApiKey('secret', false).slice(1)}`]) {
        const res = await call(t.app, key)
        expect(res.status).toBe(401)
        expect(res.body.error.code).toBe('api_key_invalid')
      }
      for (let i = 0; i < 3; i++) expect((await call(t.app, undefined)).body.error.code).toBe('authentication_required')
      expect((await call(t.app, unknownKey())).status).toBe(401)
      expect((await call(t.app, unknownKey())).status).toBe(401)
      expectRefused(await call(t.app, unknownKey()))
      // a key of the wrong shape is still answered as what it is
      expect((await call(t.app, 'not-a-key')).status).toBe(401)
    } finally {
      await t.close()
    }
  })

  it('forgets an address once its window has passed', async () => {
    const t = await testApp({}, { authFailures: { max: 1, windowSeconds: 1 } })
    try {
      expect((await call(t.app, unknownKey())).status).toBe(401)
      const refused = await call(t.app, unknownKey())
      expectRefused(refused)
      expect(refused.headers['retry-after']).toBe('1')
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      expect((await call(t.app, unknownKey())).status).toBe(401)
    } finally {
      await t.close()
    }
  })

  it('without a Redis to share with, counts in the process; an unreachable Redis is the same', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    })
    dead.on('error', () => {})
    const t = await testApp({}, { authFailures: { max: 2, windowSeconds: 60, redis: dead } })
    try {
      expect((await call(t.app, t.account.sk_test_key)).status).toBe(200)
      expect((await call(t.app, unknownKey())).status).toBe(401)
      expect((await call(t.app, unknownKey())).status).toBe(401)
      expectRefused(await call(t.app, unknownKey()))
      expect((await call(t.app, t.account.sk_test_key)).status).toBe(200)
    } finally {
      await t.close()
      dead.disconnect()
    }
  })
})

describe('what a client address is counted as', () => {
  it('counts an IPv6 client by its /64, and an IPv4 one mapped into IPv6 as itself', async () => {
    const t = await testApp({}, { authFailures: { max: 2, windowSeconds: 60 } })
    try {
      expect((await call(t.app, unknownKey(), { address: '2001:db8:1:2::1' })).status).toBe(401)
      expect((await call(t.app, unknownKey(), { address: '2001:db8:1:2:ffff::9' })).status).toBe(401)
      // another address of the same block starts nothing afresh
      expectRefused(await call(t.app, unknownKey(), { address: '2001:0db8:0001:0002:abcd:0:0:1' }))
      // the next block is another subscriber's
      expect((await call(t.app, unknownKey(), { address: '2001:db8:1:3::1' })).status).toBe(401)

      expect((await call(t.app, unknownKey(), { address: '::ffff:192.0.2.10' })).status).toBe(401)
      expect((await call(t.app, unknownKey(), { address: '192.0.2.10' })).status).toBe(401)
      expectRefused(await call(t.app, unknownKey(), { address: '::ffff:192.0.2.10' }))
      // IPv4 addresses are each their own, however close
      expect((await call(t.app, unknownKey(), { address: '192.0.2.11' })).status).toBe(401)
    } finally {
      await t.close()
    }
  })

  it('is stated for each kind of address', () => {
    expect(countedAddress('203.0.113.9')).toBe('203.0.113.9')
    expect(countedAddress('::ffff:203.0.113.9')).toBe('203.0.113.9')
    expect(countedAddress('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(countedAddress('::1')).toBe('0:0:0:0::/64')
    // as some proxies forward them, with a port
    expect(countedAddress('203.0.113.9:40001')).toBe('203.0.113.9')
    expect(countedAddress('[2001:db8::1]:443')).toBe('2001:db8:0:0::/64')
    expect(countedAddress('[::ffff:203.0.113.9]:443')).toBe('203.0.113.9')
    // what is not an address is counted with all such, so that none starts afresh by changing
    for (const text of ['unknown', '203.0.113.9:x', '', '999.1.1.1', '[nonsense]:1']) {
      expect(countedAddress(text)).toBe('unparsed')
    }
  })
})

describe('client addresses behind a proxy', () => {
  const forwarded = (address: string) => ({ headers: { 'x-forwarded-for': address } })

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: it cannot escape its count', async () => {
    const t = await testApp({}, { authFailures: { max: 2, windowSeconds: 60 } })
    try {
      expect((await call(t.app, unknownKey(), forwarded('192.0.2.1'))).status).toBe(401)
      expect((await call(t.app, unknownKey(), forwarded('192.0.2.2'))).status).toBe(401)
      expectRefused(await call(t.app, unknownKey(), forwarded('192.0.2.3')))
    } finally {
      await t.close()
    }
  })

  it('counts a forwarded address that carries a port by the address alone', async () => {
    const t = await testApp({}, { authFailures: { max: 2, windowSeconds: 60 }, trustProxy: '10.0.0.0/8' })
    try {
      const via = (forwardedFor: string) => ({ address: '10.0.0.5', ...forwarded(forwardedFor) })
      expect((await call(t.app, unknownKey(), via('203.0.113.9:40001'))).status).toBe(401)
      expect((await call(t.app, unknownKey(), via('203.0.113.9:40002'))).status).toBe(401)
      expectRefused(await call(t.app, unknownKey(), via('203.0.113.9:40003')))
      expectRefused(await call(t.app, unknownKey(), via('203.0.113.9')))
    } finally {
      await t.close()
    }
  })

  it('counts by the forwarded address when the peer is a trusted proxy', async () => {
    const t = await testApp({}, { authFailures: { max: 2, windowSeconds: 60 }, trustProxy: '127.0.0.1, 10.0.0.0/8' })
    try {
      expect((await call(t.app, unknownKey(), forwarded('192.0.2.1'))).status).toBe(401)
      expect((await call(t.app, unknownKey(), { address: '10.1.2.3', ...forwarded('192.0.2.1') })).status).toBe(401)
      expectRefused(await call(t.app, unknownKey(), forwarded('192.0.2.1')))
      // the proxy's other clients are not refused for that one
      expect((await call(t.app, unknownKey(), forwarded('192.0.2.2'))).status).toBe(401)
      // a peer outside the list is counted as itself, whatever it forwards
      expect((await call(t.app, unknownKey(), { address: '198.51.100.7', ...forwarded('192.0.2.9') })).status).toBe(401)
      expect((await call(t.app, unknownKey(), { address: '198.51.100.7', ...forwarded('192.0.2.8') })).status).toBe(401)
      expectRefused(await call(t.app, unknownKey(), { address: '198.51.100.7', ...forwarded('192.0.2.7') }))
    } finally {
      await t.close()
    }
  })

  it("builds a payer's hosted link from the forwarded scheme and host only behind a trusted proxy", async () => {
    const linkFrom = async (t: TestApp, address: string) => {
      const src = await t.sk.post('/v2/sources/', { ...cardSource({ number: '4000000000003220' }), redirect: REDIRECT })
      const res = await call(t.app, t.account.sk_test_key, {
        method: 'POST',
        url: '/v2/charges/',
        body: { amount: 1000, currency: 'usd', source: src.body.id },
        address,
        headers: {
          host: 'jackdaw.internal:8080',
          'x-forwarded-proto': 'https',
          'x-forwarded-host': 'pay.shop.example',
        },
      })
      expect(res.status).toBe(201)
      return new URL(res.body.source.action.url).origin
    }
    const behind = await testApp({}, { trustProxy: 'loopback' })
    const direct = await testApp()
    try {
      expect(await linkFrom(behind, '127.0.0.1')).toBe('https://pay.shop.example')
      expect(await linkFrom(behind, '203.0.113.5')).toBe('http://jackdaw.internal:8080')
      expect(await linkFrom(direct, '127.0.0.1')).toBe('http://jackdaw.internal:8080')
    } finally {
      await behind.close()
      await direct.close()
    }
  })
})

describe('hostile addresses and forwarded headers', () => {
  it('are answered in the documented shape, never with a 5xx', async () => {
    const t = await testApp({}, { authFailures: { max: 3, windowSeconds: 60 }, trustProxy: 'loopback, 10.0.0.0/8' })
    const forwardedText = fc.string({ unit: 'grapheme-ascii', maxLength: 60 })
    const anAddress = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended())
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(anAddress, fc.constantFrom('127.0.0.1', '::1', '10.2.3.4', '::ffff:10.2.3.4')),
          fc.option(
            fc.oneof(
              forwardedText,
              anAddress,
              fc.array(fc.oneof(anAddress, forwardedText), { maxLength: 5 }).map((a) => a.join(', ')),
            ),
          ),
          fc.boolean(),
          async (address, forwarded, known) => {
            const res = await call(t.app, known ? t.account.sk_test_key : unknownKey(), {
              address,
              headers: forwarded === null ? {} : { 'x-forwarded-for': forwarded },
            })
            if (known && res.status === 200) return
            expect([401, 429]).toContain(res.status)
            expect(Object.keys(res.body)).toEqual(['error'])
            expect(res.body.error.type).toBe(res.status === 401 ? 'authentication_error' : 'rate_limit_error')
          },
        ),
        { numRuns: 300 },
      )
    } finally {
      await t.close()
    }
  })
})

// Shared counts need Redis; CI runs the suite with REDIS_URL set on its PostgreSQL pass.
describe.runIf(REDIS_URL)('unknown keys counted across processes through Redis', () => {
  it('two app instances on one Redis share one count per address', async () => {
    const redisA = new Redis(REDIS_URL as string)
    const redisB = new Redis(REDIS_URL as string)
    const namespace = `jackdaw-test-auth-${randomBytes(4).toString('hex')}`
    const settings = { max: 3, windowSeconds: 60, namespace }
    const t = await testApp({}, { authFailures: { ...settings, redis: redisA } })
    const other = await buildApp(await t.store.connect(), t.vault, {}, { authFailures: { ...settings, redis: redisB } })
    try {
      expect((await call(t.app, unknownKey())).status).toBe(401)
      expect((await call(other.app, unknownKey())).status).toBe(401)
      expect((await call(t.app, unknownKey())).status).toBe(401)
      expectRefused(await call(other.app, unknownKey()))
      expectRefused(await call(t.app, unknownKey()))
      expect((await call(other.app, unknownKey(), { address: '10.0.0.2' })).status).toBe(401)
    } finally {
      await other.app.close()
      await t.close()
      redisA.disconnect()
      redisB.disconnect()
    }
  })
})
