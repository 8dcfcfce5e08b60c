import { randomBytes } from 'node:crypto'
import net from 'node:net'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type App, createApp } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import type { OperationOutcome } from '../../src/processor/processor.js'
import { Simulator } from '../../src/processor/simulator.js'
import type { AccountKeys } from '../../src/services/accounts.js'
import { cardSource } from '../helpers/app.js'
import { type TestStore, testStore } from '../helpers/store.js'

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((r) => {
    open = r
  })
  return { opened, open }
}

/** Authorizes like the simulator; a capture waits until the test lets it answer. */
class HeldCapture extends Simulator {
  reached = gate()
  release = gate()
  override async capture(): Promise<OperationOutcome> {
    this.reached.open()
    await this.release.opened
    return { outcome: 'succeeded' }
  }
}

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Splits what a server wrote on one connection into its responses (Content-Length framed). */
function responses(raw: string): RawResponse[] {
  const out: RawResponse[] = []
  let rest = raw
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) break
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n')
    const headers: Record<string, string> = {}
    for (const l of lines) {
      const i = l.indexOf(':')
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    out.push({ status: Number(statusLine?.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) })
    rest = rest.slice(end + 4 + length)
  }
  return out
}

/** A connection that sends what it is given and collects what the server writes until it closes. */
function connection(port: number) {
  const socket = net.connect(port, '127.0.0.1')
  let raw = ''
  socket.setEncoding('utf8')
  socket.on('data', (d) => {
    raw += d
  })
  const closed = new Promise<RawResponse[]>((resolve) => socket.on('close', () => resolve(responses(raw))))
  return { send: (text: string) => socket.write(text), closed }
}

let store: TestStore
let app: App
let account: AccountKeys
let port: number
const processor = new HeldCapture()
// runs after the app's own preClose hook: the app is closing but the server still accepts
let closingStarted = gate()
let holdClose = gate()

beforeEach(async () => {
  store = await testStore()
  app = await createApp({
    db: store.db,
    vault: new Vault(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    options: { testProcessor: processor },
  })
  closingStarted = gate()
  holdClose = gate()
  app.addHook('preClose', async () => {
    closingStarted.open()
    await holdClose.opened
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as net.AddressInfo).port
  account = await app.services.accounts.create('Shop')
})
afterEach(async () => {
  holdClose.open()
  await app.close()
  await store.close()
})

const request = (method: string, path: string, body?: string) =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.sk_test_key}\r\n` +
  (body === undefined ? '\r\n' : `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)

async function post(path: string, body: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.sk_test_key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return (await res.json()) as { id: string; status: string }
}

describe('a service that is shutting down', () => {
  it('finishes a request under way and then ends its kept-alive connection', async () => {
    const src = await post('/v2/sources/', cardSource())
    const charge = await post('/v2/charges/', { amount: 900, currency: 'usd', source: src.id, capture: false })
    expect(charge.status).toBe('succeeded')

    const conn = connection(port)
    conn.send(request('POST', `/v2/charges/${charge.id}/capture`, '{}'))
    await processor.reached.opened
    const closed = app.close()
    await closingStarted.opened
    holdClose.open()
    processor.release.open()
    // the server ends the connection itself: without that it would stay open, kept alive, and
    // hold the shutdown up until its idle timeout
    const [answer, ...more] = await conn.closed
    await closed
    expect(more).toEqual([])
    expect(answer?.status).toBe(200)
    expect(answer?.headers.connection).toBe('close')
    expect(JSON.parse(answer?.body ?? '{}')).toMatchObject({ id: charge.id, captured: true })
  })

  it('refuses a request that arrives meanwhile: 503 in the one envelope, with Request-Id and Retry-After', async () => {
    const closed = app.close()
    await closingStarted.opened
    const conn = connection(port)
    conn.send(request('GET', '/v2/charges/'))
    const [answer] = await conn.closed
    holdClose.open()
    await closed
    expect(answer?.status).toBe(503)
    expect(answer?.headers['request-id']).toMatch(/^req_[0-9a-f]+$/)
    expect(answer?.headers['retry-after']).toBe('1')
    expect(answer?.headers.connection).toBe('close')
    expect(JSON.parse(answer?.body ?? '{}')).toEqual({
      error: { type: 'api_error', code: 'service_unavailable', message: expect.any(String) },
    })
  })
})

describe('a client that never finishes sending its request', () => {
  it('gets 408 in the one envelope after the request timeout, and holds up no shutdown', async () => {
    const slowStore = await testStore()
    const slow = await createApp({
      db: slowStore.db,
      vault: new Vault(randomBytes(32)),
      logger: pino({ level: 'silent' }),
      requestTimeoutMs: 1_000,
    })
    try {
      await slow.listen({ port: 0, host: '127.0.0.1' })
      const keys = await slow.services.accounts.create('Shop')
      const c = connection((slow.server.address() as net.AddressInfo).port)
      // the headers promise 100 bytes of body; a few come, then nothing
      c.send(
        `POST /v2/customers/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.sk_test_key}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":',
      )
      const [answer, ...more] = await c.closed
      expect(more).toEqual([])
      expect(answer?.status).toBe(408)
      expect(answer?.headers['request-id']).toMatch(/^req_/)
      expect(JSON.parse(answer?.body ?? '')).toEqual({
        error: { type: 'invalid_request_error', code: 'request_timeout', message: expect.any(String) },
      })
      const customers = await slowStore.db.query<{ n: number }>('SELECT count(*)::int AS n FROM customers')
      expect(customers.rows[0]?.n).toBe(0)
    } finally {
      await slow.close()
      await slowStore.close()
    }
  }, 10_000)
})
