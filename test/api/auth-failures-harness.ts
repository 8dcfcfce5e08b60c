import { expect } from 'vitest'
import type { App } from '../../src/app.js'
import { newApiKey } from '../../src/domain/keys.js'
import { type AppExtras, buildApp, type Json, recordingDb, type TestApp } from '../helpers/app.js'

/**
 * What the tests of unknown keys counted by client address share (auth-failures.test.ts,
 * client-addresses.test.ts): a request from an address, an app whose key lookups can be counted,
 * and the check of a refusal.
 */

/** A key of the right shape that no account has. */
export const unknownKey = () => newApiKey('secret', false)

export interface Answer {
  status: number
  body: Json
  headers: Record<string, unknown>
}

/** One request with a key, from an address, as a client there would send it. */
export async function call(
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
export async function recordedApp(t: TestApp, extras: AppExtras) {
  const statements: string[] = []
  const { app } = await buildApp(recordingDb(t.db, statements), t.vault, {}, extras)
  const lookups = () => statements.filter((s) => s.includes('FROM api_keys WHERE key_hash')).length
  return { app, lookups }
}

export function expectRefused(res: Answer) {
  expect(res.status).toBe(429)
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
  expect(res.body.error.message).toMatch(/unknown API keys from this address/)
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
}
