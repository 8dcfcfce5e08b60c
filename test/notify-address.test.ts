import { pbkdf2 } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postNotify } from '../src/notify/send.js'
import { Simulator } from '../src/processor/simulator.js'
import { checkNotifyAddress, isPublicAddress, NotifyHostResolver } from '../src/services/notify-address.js'
import { testApp } from './helpers/app.js'
import { type FakeDns, fakeDns } from './helpers/dns.js'

describe('which addresses a live notify call may go to', () => {
  it.each([
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:8.8.8.8', true],
  ])('%s is public: %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected)
  })

  it('refuses private hosts in live mode only, and non-http schemes always', async () => {
    expect(await checkNotifyAddress('http://127.0.0.1:9000/hook', false)).toBeUndefined()
    expect(await checkNotifyAddress('http://127.0.0.1:9000/hook', true)).toMatch(/public addresses/)
    expect(await checkNotifyAddress('http://[::1]/hook', true)).toMatch(/public addresses/)
    expect(await checkNotifyAddress('https://8.8.8.8/hook', true)).toBeUndefined()
    expect(await checkNotifyAddress('ftp://8.8.8.8/hook', false)).toMatch(/http or https/)
    expect(await checkNotifyAddress('https://user:pw@8.8.8.8/hook', false)).toMatch(/credentials/)
  })
})

describe('live notify hosts, resolved by asking DNS within a time limit', () => {
  const addresses: Record<string, { A?: string[]; AAAA?: string[] }> = {
    'public.test': { A: ['203.0.113.7'] },
    'private.test': { A: ['10.1.2.3'] },
    'mixed.test': { A: ['203.0.113.7'], AAAA: ['fd00::1'] },
    'v6.test': { AAAA: ['2606:4700::1111'] },
  }
  let dns: FakeDns
  let resolver: NotifyHostResolver
  beforeAll(async () => {
    dns = await fakeDns((name, type) => {
      if (name === 'silent.test') return 'silent'
      const host = addresses[name]
      return host ? (host[type] ?? []) : 'nxdomain'
    })
    resolver = new NotifyHostResolver({ servers: [dns.server], timeoutMs: 500 })
  })
  afterAll(() => dns.close())

  it('accepts a host whose every address is public, and refuses one with any that is not', async () => {
    expect(await checkNotifyAddress('https://public.test/hook', true, resolver)).toBeUndefined()
    expect(await checkNotifyAddress('https://v6.test/hook', true, resolver)).toBeUndefined()
    expect(await checkNotifyAddress('https://private.test/hook', true, resolver)).toMatch(/public addresses/)
    expect(await checkNotifyAddress('https://mixed.test/hook', true, resolver)).toMatch(/public addresses/)
    expect(await checkNotifyAddress('https://missing.test/hook', true, resolver)).toMatch(/does not resolve/)
    expect(dns.asked).toContain('public.test A')
    // test mode asks nobody
    const asked = dns.asked.length
    expect(await checkNotifyAddress('https://private.test/hook', false, resolver)).toBeUndefined()
    expect(dns.asked).toHaveLength(asked)
  })

  it('takes a name server that never answers for a host that does not resolve, holding none of the threads', async () => {
    const pending = Array.from({ length: 8 }, () => checkNotifyAddress('https://silent.test/hook', true, resolver))
    let settled = 0
    for (const p of pending) void p.then(() => settled++)
    // libuv's four threads are free for the process's other work meanwhile
    await Promise.all(Array.from({ length: 8 }, () => promisify(pbkdf2)('x', 'salt', 1, 32, 'sha256')))
    expect(settled).toBe(0)
    for (const answer of await Promise.all(pending)) expect(answer).toMatch(/does not resolve/)
  })

  it('refuses a live source whose notify host does not answer, in the documented error shape', async () => {
    const t = await testApp({ liveProcessor: new Simulator(), notifyResolver: resolver })
    try {
      const source = (notify: string) =>
        t.pkLive.post('/v2/sources/', {
          type: 'card',
          card: { name: 'Ann Lee', number: '4242424242424242', exp_month: '12', exp_year: '2040', cvc: '123' },
          redirect: { success: 'https://shop.example/ok', fail: 'https://shop.example/fail', notify },
        })
      const refused = await source('https://silent.test/hook')
      expect(refused.status).toBe(422)
      expect(refused.body.error).toMatchObject({ param: 'redirect.notify' })
      expect(refused.body.error.message).toMatch(/does not resolve/)
      expect((await source('https://public.test/hook')).status).toBe(200)
    } finally {
      await t.close()
    }
  })

  it('connects only to the public address it checked: a name that turns private between the two is refused', async () => {
    const r = await receiver()
    const port = new URL(r.url).port
    // public when checked, loopback when connected to
    const turning = await fakeDns((name, type, n) =>
      name === 'turning.test' && type === 'A' ? [n === 0 ? '203.0.113.7' : '127.0.0.1'] : [],
    )
    try {
      const result = await postNotify({
        url: `http://turning.test:${port}/hook`,
        body: '{}',
        headers: {},
        timeoutMs: 2_000,
        livemode: true,
        resolver: new NotifyHostResolver({ servers: [turning.server], timeoutMs: 500 }),
      })
      expect(result.statusCode).toBeNull()
      expect(result.error).toMatch(/address refused.*127\.0\.0\.1.*not a public address/)
      expect(r.calls).toBe(0)
    } finally {
      await turning.close()
      await r.close()
    }
  })
})

/** An HTTP receiver on loopback that counts the calls reaching it. */
async function receiver(): Promise<{ url: string; calls: number; close(): Promise<void> }> {
  const state = { calls: 0 }
  const server = createServer((_req, res) => {
    state.calls++
    res.end('ok')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    get calls() {
      return state.calls
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
