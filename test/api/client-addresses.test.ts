import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countedAddress } from '../../src/http/auth-failures.js'
import { cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { call, expectRefused, unknownKey } from './auth-failures-harness.js'

/**
 * What a client address is counted as when unknown keys are counted: IPv6 blocks, IPv4 mapped
 * into IPv6, forwarded addresses behind a trusted proxy only, and hostile addresses and headers.
 */

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
