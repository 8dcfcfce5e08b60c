import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, JackdawConnectionError } from '../../src/client/index.js'
import { type ListeningApp, listeningApp } from '../helpers/listening.js'

/**
 * The typed client's retries: 429 after its Retry-After, 503 and dropped connections up to
 * maxRetries, and a POST whose answer was lost sent again with its idempotency key, which the
 * service answers without acting twice.
 */

let t: ListeningApp
beforeAll(async () => {
  t = await listeningApp()
})
afterAll(() => t.close())

describe('retries', () => {
  /** A server whose n-th request (from 1) is answered by `answer`; it records each Idempotency-Key. */
  async function flaky(answer: (n: number, req: http.IncomingMessage, res: http.ServerResponse) => void) {
    const keys: (string | undefined)[] = []
    const at: number[] = []
    const server = http.createServer((req, res) => {
      keys.push(req.headers['idempotency-key'] as string | undefined)
      at.push(Date.now())
      answer(keys.length, req, res)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return {
      keys,
      at,
      client: createClient({ apiKey: 'sk_test_x', baseUrl: url, maxRetries: 2 }),
      close: () => new Promise<void>((r) => server.close(() => r())),
    }
  }
  const unavailable = (res: http.ServerResponse) =>
    res
      .writeHead(503, { 'content-type': 'application/json' })
      .end('{"error":{"type":"api_error","code":"service_unavailable","message":"down"}}')
  const ok = (res: http.ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"account","id":"acct_1"}')

  it('waits as Retry-After says on 429, then succeeds, with the same idempotency key', async () => {
    const s = await flaky((n, _req, res) =>
      n === 1 ? res.writeHead(429, { 'retry-after': '1' }).end('{"error":{}}') : ok(res),
    )
    const me = await s.client.me.rollWebhookSecret()
    expect(me).toMatchObject({ id: 'acct_1' })
    expect(s.keys).toHaveLength(2)
    expect(s.keys[1]).toBe(s.keys[0])
    expect((s.at[1] as number) - (s.at[0] as number)).toBeGreaterThanOrEqual(950)
    await s.close()
  })

  it('retries 503 and a dropped connection, and gives up after maxRetries with the last answer', async () => {
    const dropped = await flaky((n, req, res) =>
      n === 1 ? req.socket.destroy() : n === 2 ? res.writeHead(503).end() : ok(res),
    )
    expect(await dropped.client.me.retrieve()).toMatchObject({ id: 'acct_1' })
    expect(dropped.keys).toHaveLength(3)
    await dropped.close()

    const down = await flaky((_n, _req, res) => unavailable(res))
    await expect(down.client.me.retrieve()).rejects.toMatchObject({ status: 503, code: 'service_unavailable' })
    expect(down.keys).toHaveLength(3)
    await down.close()

    const nobody = createClient({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:9', maxRetries: 1 })
    await expect(nobody.me.retrieve()).rejects.toBeInstanceOf(JackdawConnectionError)
    // the message names the address tried
    await expect(nobody.me.retrieve()).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:9\/v2\/me: no answer/)
  })

  it('sends a DELETE or an account creation again after a 429 only: after a 503 or no answer it may be done', async () => {
    const calls = [
      (c: ReturnType<typeof createClient>) => c.customers.delete('cus_1'),
      (c: ReturnType<typeof createClient>) => c.accounts.create({ name: 'Shop' }),
    ]
    for (const call of calls) {
      const limited = await flaky((n, _req, res) =>
        n === 1 ? res.writeHead(429, { 'retry-after': '0' }).end('{"error":{}}') : ok(res),
      )
      await expect(call(limited.client)).resolves.toMatchObject({ id: 'acct_1' })
      expect(limited.keys).toHaveLength(2)
      await limited.close()

      const down = await flaky((_n, _req, res) => unavailable(res))
      await expect(call(down.client)).rejects.toMatchObject({ status: 503 })
      expect(down.keys).toHaveLength(1)
      await down.close()

      const dropped = await flaky((_n, req) => req.socket.destroy())
      await expect(call(dropped.client)).rejects.toBeInstanceOf(JackdawConnectionError)
      expect(dropped.keys).toHaveLength(1)
      await dropped.close()
    }
  })

  it("an answer that is not the service's, a proxy's page say, is a JackdawError, for a call and for the event stream", async () => {
    const proxy = await flaky((_n, _req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not Found</body></html>'),
    )
    const expected = {
      status: 404,
      code: 'unexpected_response',
      message: 'HTTP 404: <html><body>Not Found</body></html>',
    }
    await expect(proxy.client.me.retrieve()).rejects.toMatchObject(expected)
    // the stream gives up on it rather than opening again and again
    const reconnects: unknown[] = []
    const events = proxy.client.events.stream({ onReconnect: (_last, failure) => reconnects.push(failure) })
    await expect(events.next()).rejects.toMatchObject(expected)
    expect(reconnects).toEqual([])
    await proxy.close()
  })

  it("a success whose body is not JSON, another server's page say, is a JackdawError, not undefined", async () => {
    const shop = await flaky((_n, _req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html>\n<html>\n  <body>My shop</body>\n</html>\n'),
    )
    // on one line, so that the CLI's message about it is one line
    await expect(shop.client.me.retrieve()).rejects.toMatchObject({
      name: 'JackdawError',
      status: 200,
      code: 'unexpected_response',
      message: 'HTTP 200: <!doctype html> <html> <body>My shop</body> </html>',
    })
    expect(shop.keys).toHaveLength(1)
    await shop.close()
  })

  it('a POST whose answer was lost is retried with its key, and the service creates one customer', async () => {
    let first = true
    const lossy = createClient({
      apiKey: t.account.sk_test_key,
      baseUrl: t.url,
      fetch: async (input, init) => {
        const res = await fetch(input, init)
        if (first && init?.method === 'POST') {
          first = false
          throw new TypeError('fetch failed: the answer was lost')
        }
        return res
      },
    })
    const email = `lost.${Date.now()}@example.com`
    const cus = await lossy.customers.create({ email, description: 'Lost answer' })
    const all = await createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url }).customers.list({ limit: 100 })
    expect(all.data.filter((c) => c.email === email).map((c) => c.id)).toEqual([cus.id])
  })

  it('a DELETE whose answer was lost is not sent again: the caller is told there was no answer, not that it is gone', async () => {
    const email = `deleted.${Date.now()}@example.com`
    const jackdaw = createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url })
    const id = (await jackdaw.customers.create({ email, description: 'Deleted' })).id as string
    let lost = false
    const lossy = createClient({
      apiKey: t.account.sk_test_key,
      baseUrl: t.url,
      fetch: async (input, init) => {
        const res = await fetch(input, init)
        if (lost) return res
        lost = true
        throw new TypeError('fetch failed: the answer was lost')
      },
    })
    await expect(lossy.customers.delete(id)).rejects.toBeInstanceOf(JackdawConnectionError)
    await expect(jackdaw.customers.retrieve(id)).rejects.toMatchObject({ status: 404 })
  })
})

describe('an answer broken after its status and headers', () => {
  /**
   * A proxy in front of the service that breaks the next answers it is told to after their status
   * and headers, the service having done the request: the connection cut, or the body stalled,
   * mid-body. It records each request's Idempotency-Key.
   */
  async function breakingProxy() {
    let broken = { count: 0, how: 'cut' as 'cut' | 'stall' }
    const keys: (string | undefined)[] = []
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', async () => {
        keys.push(req.headers['idempotency-key'] as string | undefined)
        const forwarded = ['authorization', 'content-type', 'idempotency-key'].filter((h) => req.headers[h])
        const answer = await fetch(`${t.url}${req.url}`, {
          method: req.method as string,
          headers: Object.fromEntries(forwarded.map((h) => [h, req.headers[h] as string])),
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        })
        const body = Buffer.from(await answer.arrayBuffer())
        res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': String(body.length) })
        if (broken.count === 0) return res.end(body)
        broken.count--
        res.write(body.subarray(0, 10))
        if (broken.how === 'cut') setTimeout(() => res.socket?.destroy(), 20)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return {
      keys,
      breakNext(count: number, how: 'cut' | 'stall' = 'cut') {
        broken = { count, how }
      },
      client: createClient({ apiKey: t.account.sk_test_key, baseUrl: url, timeoutMs: 500, maxRetryDelayMs: 20 }),
      close() {
        server.closeAllConnections()
        return new Promise<void>((r) => server.close(() => r()))
      },
    }
  }

  let proxy: Awaited<ReturnType<typeof breakingProxy>>
  beforeAll(async () => {
    proxy = await breakingProxy()
  })
  afterAll(() => proxy.close())

  it('a POST whose answer is cut mid-body is sent again with its key, and the service creates one customer', async () => {
    proxy.keys.length = 0
    proxy.breakNext(1)
    const email = `cut.${Date.now()}@example.com`
    const cus = await proxy.client.customers.create({ email, description: 'Cut answer' })
    expect(proxy.keys).toHaveLength(2)
    expect(proxy.keys[1]).toBe(proxy.keys[0])
    const all = await createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url }).customers.list({ limit: 100 })
    expect(all.data.filter((c) => c.email === email).map((c) => c.id)).toEqual([cus.id])
  })

  it('a read whose body stalls past timeoutMs is sent again', async () => {
    proxy.keys.length = 0
    proxy.breakNext(1, 'stall')
    expect(await proxy.client.me.retrieve()).toMatchObject({ id: t.account.id })
    expect(proxy.keys).toHaveLength(2)
  })

  it('a body cut every time, or a DELETE whose body is cut, is a JackdawConnectionError', async () => {
    proxy.keys.length = 0
    proxy.breakNext(3)
    await expect(proxy.client.me.retrieve()).rejects.toThrow(JackdawConnectionError)
    expect(proxy.keys).toHaveLength(3)

    const jackdaw = createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url })
    const id = (await jackdaw.customers.create({ email: `cut.delete.${Date.now()}@example.com`, description: 'Cut' }))
      .id as string
    proxy.keys.length = 0
    proxy.breakNext(1)
    await expect(proxy.client.customers.delete(id)).rejects.toThrow(/^DELETE .*: no answer/)
    expect(proxy.keys).toHaveLength(1)
    await expect(jackdaw.customers.retrieve(id)).rejects.toMatchObject({ status: 404 })
  })
})
