import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect } from 'vitest'
import { type App, createApp } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import type { DeliveryWorkerSettings } from '../../src/notify/worker.js'
import type { AccountKeys } from '../../src/services/accounts.js'
import type { ServiceOptions } from '../../src/services/index.js'
import type { Db } from '../../src/store/db.js'
import { type Client, cardSource, client, REDIRECT, type Reply, testOptions } from '../helpers/app.js'
import { type TestStore, testStore } from '../helpers/store.js'

/** What the receiver answers to its n-th call (from 1): a status, or 'hang' to never answer. */
export type Answer = number | 'hang'

export interface Received {
  n: number
  at: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** A real HTTP receiver on an ephemeral port of 127.0.0.1. */
export interface Receiver {
  url: string
  calls: Received[]
  answer: (n: number, body: string) => Answer | Promise<Answer>
  close(): Promise<void>
}

export async function startReceiver(answer: Receiver['answer']): Promise<Receiver> {
  const calls: Received[] = []
  const receiver: Receiver = { url: '', calls, answer, close: async () => {} }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const call = { n: calls.length + 1, at: Date.now(), headers: req.headers, body }
      calls.push(call)
      const a = await receiver.answer(call.n, body)
      if (a === 'hang') return
      res.writeHead(a, { 'content-type': 'text/plain' }).end(`answer ${a}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  receiver.url = `http://127.0.0.1:${port}/hooks/jackdaw`
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** An API timestamp (microseconds, UTC) as microseconds since the epoch, without losing any. */
export function micros(ts: string): number {
  const m = /^(.*T\d{2}:\d{2}:\d{2})\.(\d{6})Z$/.exec(ts)
  if (!m) throw new Error(`not an API timestamp: ${ts}`)
  return Date.parse(`${m[1]}Z`) * 1000 + Number(m[2])
}

export interface Harness {
  store: TestStore
  vault: Vault
  account: AccountKeys
  /** an app on the store; with `notify` its delivery worker runs until it is closed */
  open(notify?: DeliveryWorkerSettings, options?: ServiceOptions): Promise<Service>
  close(): Promise<void>
}

export interface Service {
  app: App
  db: Db
  sk: Client
  skLive: Client
  pk: Client
  close(): Promise<void>
}

/**
 * One store, one account and any number of service instances on it, opened and closed as a test
 * needs, as separate service processes would be. Each instance after the first has a pool of its own.
 */
export async function harness(): Promise<Harness> {
  const store = await testStore()
  const vault = new Vault(randomBytes(32))
  const opened: Service[] = []
  let account: AccountKeys | undefined
  const open = async (notify?: DeliveryWorkerSettings, options: ServiceOptions = {}): Promise<Service> => {
    const db = opened.length > 0 ? await store.connect() : store.db
    const app = await createApp({ db, vault, logger: false, options: testOptions(options), notify })
    await app.ready()
    account ??= await app.services.accounts.create('Notify account')
    const s: Service = {
      app,
      db,
      sk: client(app, account.sk_test_key),
      skLive: client(app, account.sk_live_key),
      pk: client(app, account.pk_test_key),
      close: () => app.close(),
    }
    opened.push(s)
    return s
  }
  const first = await open()
  await first.close()
  return {
    store,
    vault,
    get account() {
      return account as AccountKeys
    },
    open,
    async close() {
      for (const s of opened) await s.close()
      await store.close()
    },
  }
}

/** A charge on a fresh card source whose redirect.notify is `url`; its one event is charge.succeeded. */
export async function chargeNotifying(c: Client, url: string, amount = 1000) {
  const src = await c.post('/v2/sources/', { ...cardSource(), redirect: { ...REDIRECT, notify: url } })
  expect(src.status).toBe(200)
  const ch = await c.post('/v2/charges/', { amount, currency: 'usd', source: src.body.id })
  expect(ch.status).toBe(201)
  const events = await c.get('/v2/events/?limit=100')
  const event = events.body.data.find((e: { data: { object: { id: string } } }) => e.data.object.id === ch.body.id)
  expect(event).toBeDefined()
  return { charge: ch.body, event }
}

/** The delivery of one event, as the API shows it. */
export async function deliveryOf(c: Client, eventId: string) {
  let path: string | null = '/v2/deliveries/?limit=100'
  while (path) {
    const page: Reply = await c.get(path)
    expect(page.status).toBe(200)
    const found = page.body.data.find((d: { event: string }) => d.event === eventId)
    if (found) return found
    path = page.body.next
  }
  return undefined
}

export async function settled(c: Client, deliveryId: string, status: 'delivered' | 'failed', timeoutMs = 20_000) {
  return waitFor(
    `${deliveryId} ${status}`,
    async () => {
      const d = await c.get(`/v2/deliveries/${deliveryId}`)
      expect(d.status).toBe(200)
      return d.body.status === status ? d.body : undefined
    },
    timeoutMs,
  )
}
