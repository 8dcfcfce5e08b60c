import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { vi } from 'vitest'
import { type App, type AppDeps, createApp } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import type { KeyKind } from '../../src/domain/keys.js'
import { keptIdempotencyKey } from '../../src/http/idempotency.js'
import { makeLogger } from '../../src/logger.js'
import type { AccountKeys } from '../../src/services/accounts.js'
import type { ServiceOptions } from '../../src/services/index.js'
import { NotifyAllowList } from '../../src/services/notify-address.js'
import type { Db, Queryable } from '../../src/store/db.js'
import { type TestStore, testStore } from './store.js'

/** A parsed JSON body: tests read whatever fields they assert on. */
// biome-ignore lint/suspicious/noExplicitAny: JSON bodies
export type Json = any

export interface Reply<T = Json> {
  status: number
  body: T
  headers: Record<string, string | string[] | number | undefined>
  text: string
}

export interface Client {
  get<T = Json>(path: string, headers?: Record<string, string>): Promise<Reply<T>>
  post<T = Json>(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>
  put<T = Json>(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>
  delete<T = Json>(path: string, headers?: Record<string, string>): Promise<Reply<T>>
}

/** The Authorization header of HTTP Basic: the key as the user name, and a password when given. */
export const basic = (key: string, password = '') => `Basic ${Buffer.from(`${key}:${password}`).toString('base64')}`

/** An HTTP client of one app that authenticates with one key (or none), as a user would. */
export function client(app: App, key?: string): Client {
  const call = async (method: string, url: string, body: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { ...headers }
    if (key) h.authorization = basic(key)
    let payload: string | Buffer | undefined
    if (body !== undefined) {
      // a string or bytes are sent as they are: malformed bodies are tests' to send
      payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
      h['content-type'] ??= 'application/json'
    }
    const res = await app.inject({ method: method as 'GET', url, headers: h, payload })
    let parsed: unknown
    try {
      parsed = res.body ? JSON.parse(res.body) : undefined
    } catch {
      parsed = undefined
    }
    return { status: res.statusCode, body: parsed, headers: res.headers, text: res.body } as Reply
  }
  return {
    get: (p, h) => call('GET', p, undefined, h),
    post: (p, b, h) => call('POST', p, b ?? {}, h),
    put: (p, b, h) => call('PUT', p, b, h),
    delete: (p, h) => call('DELETE', p, undefined, h),
  }
}

/** The public address of test apps with a live processor that name none of their own. */
export const LIVE_PUBLIC_URL = 'https://pay.jackdaw.test'

/** The receivers on this machine that the tests' notify calls go to, as a developer would allow them. */
export const LOCAL_RECEIVERS = NotifyAllowList.parse('127.0.0.1, ::1, localhost')

/**
 * A test app's options, as an operator would configure them unless a test says otherwise: local
 * notify receivers allowed (JACKDAW_NOTIFY_ALLOW_HOSTS) and, with a live processor, a public URL
 * (which live mode requires).
 */
export function testOptions(options: ServiceOptions = {}): ServiceOptions {
  return {
    notifyAllow: LOCAL_RECEIVERS,
    ...(options.liveProcessor ? { publicUrl: LIVE_PUBLIC_URL } : {}),
    ...options,
  }
}

export interface TestApp {
  app: App
  store: TestStore
  db: Db
  vault: Vault
  account: AccountKeys
  /** test-mode secret key */
  sk: Client
  /** test-mode public key */
  pk: Client
  /** live-mode secret key */
  skLive: Client
  pkLive: Client
  anon: Client
  /** every log line the app wrote, as text */
  logs: string[]
  /** a second app on the same database, with a pool of its own, as a second process would be */
  twin(): Promise<TestApp>
  close(): Promise<void>
}

/** App settings besides the services' options: rate limiting, the notify worker. */
export type AppExtras = Pick<
  AppDeps,
  | 'rateLimit'
  | 'authFailures'
  | 'trustProxy'
  | 'notify'
  | 'bodyLimit'
  | 'recovery'
  | 'idempotencyLeaseSeconds'
  | 'requestTimeoutMs'
  | 'eventStream'
  | 'adminToken'
>

/**
 * The store, with every statement sent through its `query` pushed onto `statements` first (and its
 * parameters onto `parameters`, when given); closing it leaves the store open, for the test app
 * that owns it.
 */
export function recordingDb(db: Db, statements: string[], parameters?: unknown[][]): Db {
  const recording = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      statements.push(sql)
      parameters?.push(params ?? [])
      return q.query(sql, params)
    },
    exec: (sql) => q.exec(sql),
  })
  return {
    ...db,
    ...recording(db),
    shared: recording(db.shared),
    transaction: (fn) => db.transaction(fn),
    close: async () => {},
  }
}

export async function buildApp(
  db: Db,
  vault: Vault,
  options: AppDeps['options'] = {},
  extras: AppExtras = {},
): Promise<{ app: App; logs: string[] }> {
  const logs: string[] = []
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(chunk.toString())
      done()
    },
  })
  // the service's own logger, as `jackdaw serve` makes it, at its most talkative
  const logger = makeLogger({ LOG_LEVEL: 'trace' }, sink)
  const app = await createApp({ db, vault, logger, options: testOptions(options), ...extras })
  await app.ready()
  return { app, logs }
}

/** A fresh store, an app on it and an account with keys of both modes. */
export async function testApp(options: AppDeps['options'] = {}, extras: AppExtras = {}): Promise<TestApp> {
  const store = await testStore()
  const vault = new Vault(randomBytes(32))
  const { app, logs } = await buildApp(store.db, vault, options, extras)
  const account = await app.services.accounts.create('Test account')
  const make = (a: App, logLines: string[], ownsStore: boolean): TestApp => ({
    app: a,
    store,
    db: store.db,
    vault,
    account,
    sk: client(a, account.sk_test_key),
    pk: client(a, account.pk_test_key),
    skLive: client(a, account.sk_live_key),
    pkLive: client(a, account.pk_live_key),
    anon: client(a),
    logs: logLines,
    async twin() {
      const other = await buildApp(await store.connect(), vault, options, extras)
      return make(other.app, other.logs, false)
    },
    async close() {
      await a.close()
      if (ownsStore) await store.close()
    },
  })
  return make(app, logs, true)
}

export const TEST_CARD = {
  name: 'Ann Lee',
  number: '4242424242424242',
  exp_month: '12',
  // valid by any account's time: the simulator checks the expiry against the account's clock,
  // which a deterministic account starts in 2030 and an advance moves up to 100 years on
  exp_year: String(new Date().getUTCFullYear() + 150),
  cvc: '123',
}

export const REDIRECT = { success: 'https://shop.example/ok', fail: 'https://shop.example/fail' }

export function cardSource(overrides: Record<string, unknown> = {}) {
  return { type: 'card', card: { ...TEST_CARD, ...overrides } }
}

/**
 * Runs `fn` with the service's clock (Date.now) `ms` ahead. Ids made meanwhile keep their time
 * once the clock is back, so that ids still sort (src/domain/ids.ts): the worker's next test file
 * loads the service anew rather than make ids hours ahead.
 */
export async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const now = Date.now()
  const clock = vi.spyOn(Date, 'now').mockImplementation(() => now + ms)
  try {
    return await fn()
  } finally {
    clock.mockRestore()
    vi.resetModules()
  }
}

/** An Idempotency-Key as the store keeps it, to find its record. */
export const keptKey = (t: TestApp, key: string, kind: KeyKind = 'secret') => keptIdempotencyKey(t.vault, kind, key)
