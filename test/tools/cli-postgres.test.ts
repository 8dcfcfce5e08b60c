import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { runTs } from '../helpers/process.js'
import { testServerUrl } from '../helpers/store.js'

// serve --workers on the run's PostgreSQL server; the commands on the embedded store are in cli.test.ts
const dir = mkdtempSync(path.join(tmpdir(), 'jackdaw-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The command lines of a process's children, from /proc (Linux). */
function childCommandLines(parent: number): string[] {
  const lines: string[] = []
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === parent) lines.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '))
    } catch {
      // the process ended while being read
    }
  }
  return lines
}

describe('serve --workers on PostgreSQL at DATABASE_URL', () => {
  it('runs two API processes on one port, answering from both', async () => {
    const name = `jackdaw_workers_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: testServerUrl() })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    const url = new URL(testServerUrl())
    url.pathname = `/${name}`
    const server = runTs(['src/cli.ts', 'serve', '--workers', '2'], {
      DATABASE_URL: url.toString(),
      JACKDAW_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PORT: '18411',
      JACKDAW_DATA_DIR: dir,
    })
    try {
      await server.waitFor(/listening on http:\/\/\S+ \(2 processes\)/, 60_000)
      const [, sk] = await server.waitFor(/test secret key: (sk_test_\S+)/)
      const base = 'http://127.0.0.1:18411'
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${base}/v2/me`, { headers: { authorization: `Bearer ${sk}` } }).then((r) => r.status),
        ),
      )
      expect(statuses.every((s) => s === 200)).toBe(true)
      // two processes on a machine of two cores or fewer collect garbage on their own threads
      const flags = childCommandLines(server.child.pid as number).filter((line) => line.includes('dist/cli.js'))
      expect(flags).toHaveLength(2)
      for (const f of flags) expect(f.includes('--single-threaded-gc')).toBe(os.availableParallelism() <= 2)
      // one default account, though two processes started on the empty store
      const db = new pg.Client({ connectionString: url.toString() })
      await db.connect()
      const accounts = await db.query('SELECT count(*)::int AS n FROM accounts')
      await db.end()
      expect(accounts.rows[0].n).toBe(1)

      // SIGTERM: each process finishes the request it is working on, however long it takes
      const post = (path: string, body: object, headers: Record<string, string> = {}) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        })
      const card = { name: 'Ann Lee', number: '4242424242424242', exp_month: '12', exp_year: '2099', cvc: '123' }
      const source = (await (await post('/v2/sources/', { type: 'card', card })).json()) as { id: string }
      const slow = post(
        '/v2/charges/',
        { amount: 800, currency: 'usd', source: source.id },
        { 'jackdaw-test-fault': 'processor_latency=7000' },
      )
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      server.child.kill('SIGTERM')
      const answer = await slow
      expect(answer.status).toBe(201)
      expect(((await answer.json()) as { status: string }).status).toBe('succeeded')
      expect(await server.exited).toBe(0)
    } finally {
      await server.stop()
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }, 90_000)
})
