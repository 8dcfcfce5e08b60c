import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { newApiKey } from '../../src/domain/keys.js'
import { buildApp, later, testApp } from '../helpers/app.js'
import { call, expectRefused, recordedApp, unknownKey } from './auth-failures-harness.js'

/**
 * Unknown keys counted by client address: past the limit an address is refused with 429 before
 * any lookup, in one process or across processes through Redis. What an address is counted as is
 * in client-addresses.test.ts.
 */

const REDIS_URL = process.env.REDIS_URL

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

  it("a burst of one valid key's requests, in a process that has not seen it, is one lookup and no refusal", async () => {
    const t = await testApp()
    const { app, lookups } = await recordedApp(t, { authFailures: { max: 3, windowSeconds: 60 } })
    try {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => call(app, t.account.sk_test_key, { address: '203.0.113.20' })),
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
      expect(lookups()).toBe(1)
      // one unknown key sent at once is one lookup too, counted once
      const unknown = unknownKey()
      const refused = await Promise.all(
        Array.from({ length: 10 }, () => call(app, unknown, { address: '203.0.113.21' })),
      )
      expect(refused.map((a) => a.status)).toEqual(refused.map(() => 401))
      expect(lookups()).toBe(2)
      expect((await call(app, unknownKey(), { address: '203.0.113.21' })).status).toBe(401)
    } finally {
      await app.close()
      await t.close()
    }
  })

  it('counts wrong admin tokens with the unknown keys: an address guessing the token is refused', async () => {
    const adminToken = 'operator-token-0123456789abcdef'
    const t = await testApp({}, { authFailures: { max: 3, windowSeconds: 60 }, adminToken })
    try {
      const make = (token: string, address?: string) =>
        call(t.app, token, { method: 'POST', url: '/v2/accounts', body: { name: 'Shop' }, address })
      // the right token counts for nothing
      for (let i = 0; i < 4; i++) expect((await make(adminToken)).status).toBe(201)
      for (let i = 0; i < 3; i++) {
        expect((await make(`wrong-token-${i}-0123456789`)).body.error.code).toBe('admin_token_invalid')
      }
      expectRefused(await make('wrong-token-3-0123456789'))
      // the address that guessed waits out its window; another is served
      expectRefused(await make(adminToken))
      expect((await make(adminToken, '10.1.2.3')).status).toBe(201)
    } finally {
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
