import { spawn } from 'node:child_process'
import { pbkdf2 } from 'node:crypto'
import { createServer } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { notifyAllowList, parseConfig } from '../../src/config.js'
import { postNotify } from '../../src/notify/send.js'
import { Simulator } from '../../src/processor/simulator.js'
import {
  checkNotifyAddress,
  isPublicAddress,
  NotifyAllowList,
  NotifyHostResolver,
} from '../../src/services/notify-address.js'
import { testApp } from '../helpers/app.js'
import { type FakeDns, fakeDns } from '../helpers/dns.js'

describe('which addresses a notify call may go to', () => {
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
    ['255.255.255.255', false],
    ['203.0.113.7', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:8.8.8.8', true],
    // IPv4-compatible, -translated, 6to4 and NAT64 forms stand for the IPv4 address they embed
    ['::127.0.0.1', false],
    ['::ffff:0:7f00:1', false],
    ['::ffff:0:a9fe:a9fe', false],
    ['2002:7f00:1::1', false],
    ['2002:a9fe:a9fe::1', false],
    ['2002:808:808::1', true],
    ['64:ff9b::7f00:1', false],
    ['64:ff9b::808:808', true],
    // local-use NAT64 goes where the operator's network translates it: never
    ['64:ff9b:1::808:808', false],
    ['64:ff9b:1::7f00:1', false],
    // outside global unicast, or special within it
    ['fec0::1', false],
    ['100::1', false],
    ['2001::1', false],
    ['2001:db8::1', false],
    ['2001:2::1', false],
    ['4000::1', false],
    ['ff02::1', false],
    // not an address in its strict form
    ['127.1', false],
    ['0x7f.0.0.1', false],
  ])('%s is public: %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected)
  })

  it('refuses private hosts in both modes, unless the operator allows them, and non-http schemes always', async () => {
    for (const livemode of [false, true]) {
      expect(await checkNotifyAddress('http://127.0.0.1:9000/hook', livemode)).toMatch(/public addresses/)
      expect(await checkNotifyAddress('http://127.0.0.1:5432/', livemode)).toMatch(/public addresses/)
      expect(await checkNotifyAddress('http://169.254.169.254/latest/meta-data/', livemode)).toMatch(/public addresses/)
      expect(await checkNotifyAddress('http://[::1]/hook', livemode)).toMatch(/public addresses/)
      expect(await checkNotifyAddress('http://[::ffff:0:7f00:1]/hook', livemode)).toMatch(/public addresses/)
      expect(await checkNotifyAddress('http://[2002:7f00:1::1]/hook', livemode)).toMatch(/public addresses/)
      expect(await checkNotifyAddress('https://8.8.8.8/hook', livemode)).toBeUndefined()
      expect(await checkNotifyAddress('ftp://8.8.8.8/hook', livemode)).toMatch(/http or https/)
      expect(await checkNotifyAddress('https://user:pw@8.8.8.8/hook', livemode)).toMatch(/credentials/)
    }
    // a name for this machine is refused when the source is made, in test mode too
    expect(await checkNotifyAddress('http://localhost:9000/hook', false)).toMatch(/public addresses/)
    expect(await checkNotifyAddress('http://api.localhost/hook', false)).toMatch(/public addresses/)
    // what the operator allows (JACKDAW_NOTIFY_ALLOW_HOSTS)
    const allow = NotifyAllowList.parse('localhost, 10.0.0.0/8, ::1')
    expect(await checkNotifyAddress('http://localhost:9000/hook', false, undefined, allow)).toBeUndefined()
    expect(await checkNotifyAddress('http://10.1.2.3/hook', true, undefined, allow)).toBeUndefined()
    expect(await checkNotifyAddress('http://[::1]:8080/hook', false, undefined, allow)).toBeUndefined()
    expect(await checkNotifyAddress('http://127.0.0.1/hook', false, undefined, allow)).toMatch(/public addresses/)
  })

  it('reads an allow list of names, addresses and CIDR ranges, and names an entry that is none', () => {
    const allow = NotifyAllowList.parse(' Receiver.Internal , 192.168.0.0/16 [fd00::1]  2001:db8::/32')
    expect(allow.allowsName('receiver.internal')).toBe(true)
    expect(allow.allowsName('other.internal')).toBe(false)
    expect(allow.allowsAddress('192.168.4.5')).toBe(true)
    expect(allow.allowsAddress('::ffff:192.168.4.5')).toBe(true)
    expect(allow.allowsAddress('192.169.0.1')).toBe(false)
    expect(allow.allowsAddress('fd00::1')).toBe(true)
    expect(allow.allowsAddress('2001:db8:5::1')).toBe(true)
    expect(() => NotifyAllowList.parse('10.0.0.0/33')).toThrow(/10\.0\.0\.0\/33 is not a CIDR range/)
    expect(() => NotifyAllowList.parse('host!')).toThrow(/host! is not a host name, an address or a CIDR range/)
    expect(() => parseConfig({ JACKDAW_NOTIFY_ALLOW_HOSTS: 'a b/c' })).toThrow(/JACKDAW_NOTIFY_ALLOW_HOSTS/)
    expect(notifyAllowList(parseConfig({})).allowsAddress('127.0.0.1')).toBe(false)
  })
})

describe('live notify hosts, resolved by asking DNS within a time limit', () => {
  const addresses: Record<string, { A?: string[]; AAAA?: string[] }> = {
    'public.test': { A: ['93.184.216.34'] },
    'private.test': { A: ['10.1.2.3'] },
    'mixed.test': { A: ['93.184.216.34'], AAAA: ['fd00::1'] },
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
    // test mode checks names when it calls them, not when the source is made
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

  it('connects only to the address it checked: a name that turns private between the two is not asked again', async () => {
    const r = await receiver()
    const port = new URL(r.url).port
    // public when checked, loopback if asked again
    const turning = await fakeDns((name, type, n) =>
      name === 'turning.test' && type === 'A' ? [n === 0 ? '192.0.2.1' : '127.0.0.1'] : [],
    )
    try {
      const result = await postNotify({
        url: `http://turning.test:${port}/hook`,
        body: '{}',
        headers: {},
        timeoutMs: 2_000,
        connectTimeoutMs: 300,
        resolver: new NotifyHostResolver({ servers: [turning.server], timeoutMs: 500 }),
        allow: NotifyAllowList.parse('192.0.2.0/24'),
      })
      expect(result.statusCode).toBeNull()
      expect(r.calls).toBe(0)
      expect(turning.asked).toEqual(['turning.test A', 'turning.test AAAA'])
    } finally {
      await turning.close()
      await r.close()
    }
  })

  it('calls a name only when every address it resolves to is allowed, in both modes', async () => {
    const r = await receiver()
    const port = new URL(r.url).port
    const local = await fakeDns((name, type) => (name === 'local.test' && type === 'A' ? ['127.0.0.1'] : []))
    const call = (allow?: NotifyAllowList) =>
      postNotify({
        url: `http://local.test:${port}/hook`,
        body: '{}',
        headers: {},
        timeoutMs: 2_000,
        resolver: new NotifyHostResolver({ servers: [local.server], timeoutMs: 500 }),
        allow,
      })
    try {
      expect(await call()).toMatchObject({ statusCode: null, error: 'address_refused' })
      expect(r.calls).toBe(0)
      expect(await call(NotifyAllowList.parse('127.0.0.0/8'))).toMatchObject({ statusCode: 200, error: null })
      expect(r.calls).toBe(1)
    } finally {
      await local.close()
      await r.close()
    }
  })
})

describe('what an attempt records of a failure', () => {
  const allow = NotifyAllowList.parse('127.0.0.1')
  const call = (url: string, extra: Partial<Parameters<typeof postNotify>[0]> = {}) =>
    postNotify({ url, body: '{}', headers: {}, timeoutMs: 1_000, allow, ...extra })

  it("a class of error, never the socket's own message", async () => {
    const closed = net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    expect(await call(`http://127.0.0.1:${port}/`)).toMatchObject({ statusCode: null, error: 'connection_refused' })

    const resetting = net.createServer((socket) => socket.resetAndDestroy())
    const silent = net.createServer(() => {})
    const garbage = net.createServer((socket) => socket.end('NOT HTTP\r\n\r\n'))
    const hangingUp = net.createServer((socket) => socket.end())
    const plain = net.createServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'))
    const servers = [resetting, silent, garbage, hangingUp, plain]
    for (const server of servers) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const urlOf = (server: net.Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
    try {
      expect((await call(urlOf(resetting))).error).toBe('connection_reset')
      expect((await call(urlOf(silent))).error).toBe('timeout')
      expect((await call(urlOf(garbage))).error).toBe('invalid_response')
      expect((await call(urlOf(hangingUp))).error).toBe('connection_closed')
      // an https address whose port answers plain HTTP fails its handshake
      expect((await call(urlOf(plain).replace('http:', 'https:'))).error).toBe('tls')
      // over TLS, a receiver that ends the connection before the handshake has closed it too
      expect((await call(urlOf(hangingUp).replace('http:', 'https:'))).error).toBe('connection_closed')
      expect(
        (await call(`https://127.0.0.1:${(silent.address() as AddressInfo).port}/`, { timeoutMs: 300 })).error,
      ).toBe('timeout')
      // not allowed: refused without a connection, in test mode as in live mode
      expect((await call('http://127.0.0.1:5432/', { allow: undefined })).error).toBe('address_refused')
      expect((await call('http://169.254.169.254/latest/meta-data/', { allow: undefined })).error).toBe(
        'address_refused',
      )
    } finally {
      for (const server of servers) server.close()
    }
  })

  it("gives up on a connection that does not open within the connect timeout, well before the call's", async () => {
    const port = await fullListener()
    const started = performance.now()
    const result = await postNotify({
      url: `http://127.0.0.1:${port}/`,
      body: '{}',
      headers: {},
      timeoutMs: 30_000,
      connectTimeoutMs: 200,
      allow,
    })
    expect(result).toMatchObject({ statusCode: null, error: 'connect_timeout' })
    expect(performance.now() - started).toBeLessThan(10_000)
  })
})

/**
 * A port on 127.0.0.1 whose listener takes no connection from its queue, the queue already full:
 * the kernel leaves a new connection unanswered, as a receiver behind a dropping firewall would.
 * (Node accepts every connection as it comes, so the listener is another process's.)
 */
async function fullListener(): Promise<number> {
  const listener = spawn('python3', [
    '-c',
    "import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(60)",
  ])
  cleanups.push(() => listener.kill())
  const port = await new Promise<number>((resolve, reject) => {
    listener.once('error', reject)
    listener.stdout.once('data', (d) => resolve(Number(String(d).trim())))
  })
  // the one connection the queue holds
  const held = net.connect({ host: '127.0.0.1', port })
  await new Promise((resolve) => held.once('connect', resolve))
  cleanups.push(() => held.destroy())
  return port
}

const cleanups: (() => void)[] = []
afterAll(() => {
  for (const f of cleanups) f()
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
