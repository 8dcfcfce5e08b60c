/**
 * `jackdaw/testing`: the service in a test suite's own process. startJackdaw() serves the API on
 * a free port of 127.0.0.1 over a fresh database, with an account of its own, so that every test
 * file (or every test) gets a payment service nothing else writes to.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { createApp } from '../app.js'
import { Vault } from '../crypto/vault.js'
import type { AccountKeys } from '../services/accounts.js'
import { openPostgres } from '../store/db.js'
import { freshDatabase } from './postgres.js'

export { POSTGRES_URL_VARIABLE } from './postgres.js'
export type { AccountKeys }

export interface StartOptions {
  /** the account's name; `Test account` when left out */
  accountName?: string
  /** seconds between notify attempts after a failed one; a second each unless told */
  notifySchedule?: number[]
  /** the operator's token, so that the suite may make and remove accounts (POST /v2/accounts) */
  adminToken?: string
}

/** An answer of the API: its status and its parsed JSON body. */
export interface ApiReply<T = ApiBody> {
  status: number
  body: T
  headers: Headers
}

/** A JSON body as the API sends it. */
export type ApiBody = Record<string, unknown> & { error?: { type: string; code: string; message: string } }

export interface RequestOptions {
  /** sent as Idempotency-Key, so that the request may be retried safely */
  idempotencyKey?: string
  /** another key than the account's test secret key (its public key, for sources) */
  key?: string
  headers?: Record<string, string>
}

/** A small client of the API that authenticates with the account's test secret key. */
export interface JackdawClient {
  get<T = ApiBody>(path: string, options?: RequestOptions): Promise<ApiReply<T>>
  post<T = ApiBody>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiReply<T>>
  put<T = ApiBody>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiReply<T>>
  delete<T = ApiBody>(path: string, options?: RequestOptions): Promise<ApiReply<T>>
}

export interface RunningJackdaw {
  /** where the API answers, e.g. http://127.0.0.1:41234 */
  url: string
  /** the account's four keys and two webhook secrets */
  keys: AccountKeys
  client: JackdawClient
  /** stops the service and drops its database */
  close(): Promise<void>
}

export function jackdawClient(url: string, key: string): JackdawClient {
  const call = async <T>(method: string, path: string, body: unknown, options: RequestOptions = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? key}`, ...options.headers }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey
    const res = await fetch(new URL(path, url), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers }
  }
  return {
    get: (path, options) => call('GET', path, undefined, options),
    post: (path, body, options) => call('POST', path, body ?? {}, options),
    put: (path, body, options) => call('PUT', path, body, options),
    delete: (path, options) => call('DELETE', path, undefined, options),
  }
}

/**
 * Starts the service in this process on a fresh database of the run's PostgreSQL (the server
 * JACKDAW_TESTING_POSTGRES_URL names, or one embedded server per process, started at the first
 * call), with its notify worker and recovery sweep, and makes an account.
 */
export async function startJackdaw(options: StartOptions = {}): Promise<RunningJackdaw> {
  const database = await freshDatabase()
  const db = await openPostgres({ url: database.url, poolSize: 5 })
  const vault = new Vault(randomBytes(32))
  const app = await createApp({
    db,
    vault,
    logger: false,
    notify: {
      schedule: options.notifySchedule ?? [1, 1, 1],
      timeoutMs: 5_000,
      pollMs: 200,
      concurrency: 5,
    },
    recovery: { intervalMs: 1_000, graceMs: 30_000 },
    adminToken: options.adminToken,
  })
  try {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const keys = await app.services.accounts.create(options.accountName ?? 'Test account')
    const { port } = app.server.address() as AddressInfo
    const url = `http://127.0.0.1:${port}`
    return {
      url,
      keys,
      client: jackdawClient(url, keys.sk_test_key),
      async close() {
        await app.close()
        await db.close()
        await database.drop()
      },
    }
  } catch (err) {
    await app.close()
    await db.close()
    await database.drop()
    throw err
  }
}
