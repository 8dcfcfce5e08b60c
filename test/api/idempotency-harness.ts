import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect } from 'vitest'
import { type Reply, type TestApp, testApp } from '../helpers/app.js'

/**
 * What the Idempotency-Key tests share (idempotency*.test.ts): the app, fresh keys and bodies,
 * the counts of what was created, and the checks of a replayed and a fresh answer.
 */

export let t: TestApp

/** One app for the file. */
export function useIdempotencyApp(): void {
  beforeAll(async () => {
    t = await testApp()
  })
  afterAll(() => t.close())
}

export const key = () => `key-${randomUUID()}`
export const idem = (k: string) => ({ 'idempotency-key': k })

let seq = 0
export const customerBody = () => ({ email: `idem.${++seq}.${Date.now()}@example.com`, description: 'Idempotent' })

export async function countCustomers(email: string): Promise<number> {
  const res = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM customers WHERE email = $1', [email])
  return Number(res.rows[0]?.n)
}
export async function countSources(): Promise<number> {
  const res = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM sources')
  return Number(res.rows[0]?.n)
}

export function expectReplayOf(replay: Reply, first: Reply) {
  expect(replay.status).toBe(first.status)
  expect(replay.text).toBe(first.text)
  expect(replay.headers['idempotent-replayed']).toBe('true')
  expect(String(replay.headers['content-type'])).toMatch(/^application\/json/)
}

export function expectFresh(res: Reply, status: number) {
  expect(res.status, res.text).toBe(status)
  expect(res.headers['idempotent-replayed']).toBeUndefined()
}
