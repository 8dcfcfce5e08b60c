import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/api.js'
import { loadMigrations } from '../../src/store/migrate.js'
import { databaseUrl, sharedTemplate } from '../../src/testing/databases.js'
import { POSTGRES_URL_VARIABLE, startJackdaw } from '../../src/testing/index.js'
import { TEST_CARD } from '../helpers/app.js'
import { runToEnd } from '../helpers/process.js'

describe('startJackdaw', () => {
  it('serves the API on a free port over a database of its own, which close drops', async () => {
    const [a, b] = await Promise.all([startJackdaw(), startJackdaw({ accountName: 'Second shop' })])
    try {
      expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(a.url).not.toBe(b.url)
      const me = await b.client.me.retrieve()
      expect(me).toMatchObject({ id: b.keys.id, name: 'Second shop', livemode: false })
      // each has its own database: what one makes, the other does not hold
      const made = await a.client.customers.create({ email: 'ann@example.com', description: 'A' })
      const id = made.id as string
      expect((await a.client.customers.retrieve(id)).id).toBe(id)
      await expect(b.client.customers.retrieve(id)).rejects.toMatchObject({ status: 404 })
      const stranger = createClient({ apiKey: a.keys.sk_test_key, baseUrl: b.url, maxRetries: 0 })
      await expect(stranger.me.retrieve()).rejects.toMatchObject({ status: 401 })
      // an Idempotency-Key is sent as told: the retry gets the first answer
      const body = { email: 'bob@example.com', description: 'B' }
      const first = await a.client.customers.create(body, { idempotencyKey: 'k1' })
      const retry = await a.client.customers.create(body, { idempotencyKey: 'k1' })
      expect(retry.id).toBe(first.id)
    } finally {
      await b.close()
    }
    // other test files make and drop databases on the same server meanwhile: a's is looked for by name
    const exists = async (name: string) => {
      const admin = new pg.Client({ connectionString: process.env[POSTGRES_URL_VARIABLE] })
      await admin.connect()
      try {
        return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rows.length === 1
      } finally {
        await admin.end()
      }
    }
    expect(a.database).not.toBe(b.database)
    expect(await exists(a.database)).toBe(true)
    await a.close()
    expect(await exists(a.database)).toBe(false)
    await expect(fetch(`${a.url}/v2/me`)).rejects.toThrow()
  })
})

describe('the template databases are cloned from', () => {
  it('is made once per server and migration set, however many processes ask at once', async () => {
    const adminUrl = process.env[POSTGRES_URL_VARIABLE] as string
    const digest = randomBytes(8).toString('hex')
    const names = await Promise.all([1, 2, 3, 4].map(() => sharedTemplate(adminUrl, digest)))
    expect(new Set(names)).toEqual(new Set([`jackdaw_template_${digest}`]))
    const admin = new pg.Client({ connectionString: adminUrl })
    await admin.connect()
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [names[0]])
      expect(found.rows).toHaveLength(1)
      const template = new pg.Client({ connectionString: databaseUrl(adminUrl, names[0] as string) })
      await template.connect()
      const applied = await template.query('SELECT count(*)::int AS n FROM schema_migrations')
      await template.end()
      expect(applied.rows[0].n).toBe(loadMigrations().length)
      expect(await sharedTemplate(adminUrl, digest)).toBe(names[0])
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${names[0]}`)
      await admin.end()
    }
  })
})

describe('startJackdaw and the test clock', () => {
  it("fails a charge whose payer never answers, and erases unused card data, once the clock passes the service's times", async () => {
    const j = await startJackdaw()
    try {
      const { client } = j
      const threeDs = await client.sources.create({
        type: 'card',
        card: { ...TEST_CARD, number: '4000000000003220' },
        redirect: { success: 'https://shop.example/ok', fail: 'https://shop.example/fail' },
      })
      const pending = await client.charges.create({ amount: 1000, currency: 'usd', source: threeDs.id as string })
      expect(pending.status).toBe('pending')
      const unused = await client.sources.create({ type: 'card', card: { ...TEST_CARD } })
      // past the payer's day and the card data's day; the sweep runs at once after an advance
      await j.clock.advance(2 * 86_400)
      const started = Date.now()
      while ((await client.charges.retrieve(pending.id)).status === 'pending' && Date.now() - started < 10_000) {
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(await client.charges.retrieve(pending.id)).toMatchObject({
        status: 'failed',
        failure_data: { code: 'payment_expired' },
      })
      const late = await client.charges.create({ amount: 500, currency: 'usd', source: unused.id as string })
      expect(late).toMatchObject({ status: 'failed', failure_data: { code: 'card_unavailable' } })
    } finally {
      await j.close()
    }
  })

  it('refuses a seed without deterministic, and deterministic without a seed, as POST /v2/accounts does', async () => {
    await expect(startJackdaw({ seed: 'alone' })).rejects.toThrow(/deterministic: true/)
    await expect(startJackdaw({ deterministic: true })).rejects.toThrow(/needs a seed/)
  })

  it("answers the account's clock, and makes a deterministic account that replays alike", async () => {
    const plain = await startJackdaw()
    const [one, two] = await Promise.all([
      startJackdaw({ deterministic: true, seed: 'replay' }),
      startJackdaw({ deterministic: true, seed: 'replay' }),
    ])
    try {
      const before = Date.parse(await plain.clock.now())
      expect(Math.abs(before - Date.now())).toBeLessThan(60_000)
      const after = Date.parse(await plain.clock.advance(86_400))
      expect(after - before).toBeGreaterThanOrEqual(86_400_000)
      const customer = await plain.client.customers.create({ email: 'ann@example.com', description: 'A' })
      expect(Date.parse(customer.created_at as string)).toBeGreaterThanOrEqual(after)

      expect(await one.clock.now()).toBe('2030-01-01T00:00:00.000000Z')
      expect(await one.clock.advance(60)).toBe('2030-01-01T00:01:00.000000Z')
      await two.clock.advance(60)
      const made = await Promise.all(
        [one, two].map((j) => j.client.customers.create({ email: 'bo@example.com', description: 'B' })),
      )
      expect(made[1]).toEqual(made[0])
      expect(made[0]?.created_at).toBe('2030-01-01T00:01:00.000000Z')
    } finally {
      await Promise.all([plain.close(), one.close(), two.close()])
    }
  })
})

describe('ready databases', () => {
  it('a start leaves a clone of the template ready, which a later start takes whole', async () => {
    const adminUrl = process.env[POSTGRES_URL_VARIABLE] as string
    const spares = async () => {
      const admin = new pg.Client({ connectionString: adminUrl })
      await admin.connect()
      try {
        const res = await admin.query<{ datname: string }>(
          "SELECT datname FROM pg_database WHERE starts_with(datname, 'jackdaw_spare_')",
        )
        return res.rows.map((r) => r.datname)
      } finally {
        await admin.end()
      }
    }
    const first = await startJackdaw()
    // close waits for the spare its start began
    await first.close()
    const ready = await spares()
    expect(ready.length).toBeGreaterThan(0)
    const [one, two, three] = await Promise.all([startJackdaw(), startJackdaw(), startJackdaw()])
    try {
      // each took a database of its own, migrated: a spare is never given twice
      expect(new Set([one.database, two.database, three.database]).size).toBe(3)
      for (const j of [one, two, three]) {
        const made = await j.client.customers.create({ email: 'ann@example.com', description: 'A' })
        expect(made.object).toBe('customer')
      }
      // the spares there were are gone, renamed to the databases taken (or by other files' starts)
      const now = await spares()
      expect(ready.filter((name) => now.includes(name)).length).toBeLessThan(ready.length)
    } finally {
      await Promise.all([one.close(), two.close(), three.close()])
    }
  })
})

describe('a process that uses startJackdaw outside a test runner', () => {
  it('leaves no PostgreSQL server and no directory behind when it ends', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-leak-'))
    // as root, the server runs as postgres, which must reach its directory under this one
    chmodSync(tmp, 0o755)
    try {
      // no server named: it starts one of its own, in a directory under TMPDIR
      const run = await runToEnd(['--conditions=jackdaw-source', 'test/fixtures/start-and-close.ts'], {
        VITEST: undefined,
        JACKDAW_TESTING_POSTGRES_URL: undefined,
        TMPDIR: tmp,
      })
      expect(run.output).toContain('done')
      expect(run.code).toBe(0)
      expect(readdirSync(tmp).filter((f) => f.startsWith('jackdaw-testing-'))).toEqual([])
      const servers = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      expect(servers.split('\n').filter((line) => line.includes(tmp))).toEqual([])
    } finally {
      // a server left behind is stopped here, so that a failure leaves nothing running
      const left = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n')
      for (const line of left.filter((l) => l.includes(tmp))) process.kill(Number.parseInt(line, 10), 'SIGQUIT')
      rmSync(tmp, { recursive: true, force: true })
    }
  }, 60_000)
})

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
