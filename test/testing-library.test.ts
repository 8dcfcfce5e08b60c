import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { POSTGRES_URL_VARIABLE, startJackdaw } from '../src/testing/index.js'
import { runToEnd } from './helpers/process.js'

describe('startJackdaw', () => {
  it('serves the API on a free port over a database of its own, which close drops', async () => {
    const [a, b] = await Promise.all([startJackdaw(), startJackdaw({ accountName: 'Second shop' })])
    try {
      expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(a.url).not.toBe(b.url)
      const me = await b.client.get<{ id: string; name: string; livemode: boolean }>('/v2/me')
      expect(me.status).toBe(200)
      expect(me.body).toMatchObject({ id: b.keys.id, name: 'Second shop', livemode: false })
      // each has its own database: what one makes, the other does not hold
      const made = await a.client.post<{ id: string }>('/v2/customers/', { email: 'ann@example.com', description: 'A' })
      expect(made.status).toBe(201)
      expect((await a.client.get(`/v2/customers/${made.body.id}`)).status).toBe(200)
      const other = await jackdawClientOf(b, a.keys.sk_test_key).get('/v2/me')
      expect(other.status).toBe(401)
      // an Idempotency-Key is sent as told: the retry gets the first answer
      const again = await a.client.post<{ id: string }>(
        '/v2/customers/',
        { email: 'bob@example.com', description: 'B' },
        { idempotencyKey: 'k1' },
      )
      const retry = await a.client.post<{ id: string }>(
        '/v2/customers/',
        { email: 'bob@example.com', description: 'B' },
        { idempotencyKey: 'k1' },
      )
      expect(retry.body.id).toBe(again.body.id)
    } finally {
      await b.close()
    }
    const databases = async () => {
      const admin = new pg.Client({ connectionString: process.env[POSTGRES_URL_VARIABLE] })
      await admin.connect()
      try {
        return (await admin.query<{ datname: string }>('SELECT datname FROM pg_database')).rows.length
      } finally {
        await admin.end()
      }
    }
    const before = await databases()
    await a.close()
    expect(await databases()).toBe(before - 1)
    await expect(fetch(`${a.url}/v2/me`)).rejects.toThrow()
  })
})

/** A client of one running service with another key. */
function jackdawClientOf(running: { client: { get: (p: string, o?: { key?: string }) => unknown } }, key: string) {
  return { get: (path: string) => running.client.get(path, { key }) as Promise<{ status: number }> }
}

describe('the example shop', () => {
  it("passes its suite under Node's own test runner too", async () => {
    // on this run's PostgreSQL (JACKDAW_TESTING_POSTGRES_URL, inherited), and not told it runs in Vitest
    const run = await runToEnd(['--conditions=jackdaw-source', '--test', 'examples/shop/shop.test.ts'], {
      VITEST: undefined,
    })
    expect(run.output).toMatch(/# pass 4/)
    expect(run.output).toMatch(/# fail 0/)
    expect(run.code).toBe(0)
  }, 60_000)
})
