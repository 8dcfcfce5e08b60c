import { spawnSync } from 'node:child_process'
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { type Running, runToEnd, runTs } from '../helpers/process.js'

const root = mkdtempSync(path.join(tmpdir(), 'jackdaw-embedded-'))
// the server's account (the service runs as root here) passes through to the data directories
chmodSync(root, 0o711)
afterAll(() => rmSync(root, { recursive: true, force: true }))

let made = 0
function dataDir(): string {
  made += 1
  return path.join(root, `d${made}`)
}

const envOf = (dir: string) => ({
  JACKDAW_DATA_DIR: dir,
  PORT: '0',
  DATABASE_URL: undefined,
  JACKDAW_ENCRYPTION_KEY: undefined,
})

interface Started {
  service: Running
  base: string
  sk: string
}

async function start(dir: string): Promise<Started> {
  const service = runTs(['src/main.ts'], envOf(dir))
  const [, base] = await service.waitFor(/listening on (http:\/\/\S+)/, 60_000)
  const [, sk] = await service.waitFor(/test secret key: (sk_test_\S+)/)
  return { service, base: base as string, sk: sk as string }
}

async function call(s: Started, method: string, url: string, body?: unknown) {
  const res = await fetch(`${s.base}${url}`, {
    method,
    headers: { authorization: `Bearer ${s.sk}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** The process number in the cluster's postmaster.pid, if it is there. */
function postmasterPid(dir: string): number | undefined {
  const file = path.join(dir, 'postgres', 'postmaster.pid')
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Whether the process ends within a few seconds (a server that has stopped may wait to be reaped). */
async function ends(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50))
  return !alive(pid)
}

/** A PostgreSQL server's process not working in `dir`: the test database's, or the machine's. */
function anotherPostgres(dir: string): number {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!pid) continue
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
      if (comm === 'postgres' && !realpathSync(`/proc/${pid}/cwd`).startsWith(realpathSync(dir))) return pid
    } catch {
      // ended meanwhile
    }
  }
  throw new Error('no other PostgreSQL server runs on this machine')
}

describe('the embedded PostgreSQL server', () => {
  it('is made in a 0700 directory, stops with the service, and survives the death of either', async () => {
    const dir = dataDir()
    const first = await start(dir)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(path.join(dir, 'encryption.key')).mode & 0o777).toBe(0o600)
    expect(first.service.output()).toContain(`psql -h ${dir} -U postgres jackdaw`)
    const customer = await call(first, 'POST', '/v2/customers/', { email: 'ann@example.com', description: 'Ann' })
    expect(customer.status).toBe(201)

    // the server runs no processes standing by for work it never has
    const psql = new pg.Client({ host: dir, user: 'postgres', database: 'jackdaw' })
    await psql.connect()
    const kinds = await psql.query<{ backend_type: string }>('SELECT DISTINCT backend_type FROM pg_stat_activity')
    const running = kinds.rows.map((r) => r.backend_type)
    expect(running).toContain('checkpointer')
    expect(running).not.toContain('io worker')
    expect(running).not.toContain('logical replication launcher')
    // its small buffer cache, which a setting of the user's overrides from the next start on
    expect((await psql.query('SHOW shared_buffers')).rows[0].shared_buffers).toBe('32MB')
    await psql.query("ALTER SYSTEM SET shared_buffers = '48MB'")
    await psql.end()

    // SIGTERM: the service stops its server
    const server = postmasterPid(dir) as number
    expect(await first.service.stop('SIGTERM')).toBe(0)
    expect(postmasterPid(dir)).toBeUndefined()
    expect(await ends(server)).toBe(true)

    // SIGKILL of the service leaves its server running; the next start takes it over
    const second = await start(dir)
    const left = postmasterPid(dir) as number
    await second.service.stop('SIGKILL')
    expect(alive(left)).toBe(true)
    const third = await start(dir)
    expect(await ends(left)).toBe(true)
    const settings = new pg.Client({ host: dir, user: 'postgres', database: 'jackdaw' })
    await settings.connect()
    expect((await settings.query('SHOW shared_buffers')).rows[0].shared_buffers).toBe('48MB')
    await settings.end()
    expect((await call(third, 'GET', `/v2/customers/${customer.body.id}`)).body.email).toBe('ann@example.com')

    // SIGKILL of the server: the service says so and stops; the next start recovers the cluster
    process.kill(postmasterPid(dir) as number, 'SIGKILL')
    expect(await third.service.exited).toBe(1)
    expect(third.service.output()).toMatch(/embedded PostgreSQL server on .* went away/)
    const fourth = await start(dir)
    expect((await call(fourth, 'GET', `/v2/customers/${customer.body.id}`)).body.email).toBe('ann@example.com')

    // the service and its server killed at once, and the server's number since taken by another
    // cluster's PostgreSQL (after a reboot, the machine's own can take it): the next start recovers
    const lost = postmasterPid(dir) as number
    await fourth.service.stop('SIGKILL')
    process.kill(lost, 'SIGKILL')
    expect(await ends(lost)).toBe(true)
    const pidFile = path.join(dir, 'postgres', 'postmaster.pid')
    const [, ...rest] = readFileSync(pidFile, 'utf8').split('\n')
    writeFileSync(pidFile, [String(anotherPostgres(dir)), ...rest].join('\n'))
    const fifth = await start(dir)
    expect(fifth.service.output()).not.toMatch(/cannot reach/)
    expect((await call(fifth, 'GET', `/v2/customers/${customer.body.id}`)).body.email).toBe('ann@example.com')
    expect(await fifth.service.stop()).toBe(0)

    // a copy of the stopped directory made by root with a tool that keeps no owners starts too
    const copy = dataDir()
    cpSync(dir, copy, { recursive: true })
    expect(statSync(path.join(copy, 'postgres', 'PG_VERSION')).uid).toBe(process.getuid?.())
    const restored = await start(copy)
    expect((await call(restored, 'GET', `/v2/customers/${customer.body.id}`)).body.email).toBe('ann@example.com')
    expect(await restored.service.stop()).toBe(0)
  }, 240_000)

  it('refuses a data directory others can read, naming it', async () => {
    const dir = dataDir()
    mkdirSync(dir, { mode: 0o755 })
    chmodSync(dir, 0o755)
    const run = await runToEnd(['src/main.ts'], envOf(dir))
    expect(run.code).toBe(1)
    expect(run.output).toContain(`${dir} can be read or entered by other users (mode 755)`)
    expect(run.output).toContain(`chmod 700 ${dir}`)
    expect(existsSync(path.join(dir, 'postgres'))).toBe(false)
  }, 60_000)

  it("refuses a PGlite store's directory, saying what to do", async () => {
    const dir = dataDir()
    mkdirSync(path.join(dir, 'pg'), { recursive: true, mode: 0o700 })
    writeFileSync(path.join(dir, 'pg', 'PG_VERSION'), '17\n')
    writeFileSync(path.join(dir, 'jackdaw.lock'), '')
    const run = await runToEnd(['src/main.ts'], envOf(dir))
    expect(run.code).toBe(1)
    expect(run.output).toMatch(/holds a store of an earlier Jackdaw version \(PGlite/)
    expect(run.output).toMatch(/move the directory aside/)
  }, 60_000)

  it('refuses a cluster of another major version and a server that cannot start, changing nothing', async () => {
    const dir = dataDir()
    const first = await start(dir)
    const customer = await call(first, 'POST', '/v2/customers/', { email: 'bo@example.com', description: 'Bo' })
    await first.service.stop()

    const versionFile = path.join(dir, 'postgres', 'PG_VERSION')
    const version = readFileSync(versionFile, 'utf8')
    writeFileSync(versionFile, '16\n')
    const older = await runToEnd(['src/main.ts'], envOf(dir))
    expect(older.code).toBe(1)
    expect(older.output).toMatch(
      /holds a PostgreSQL 16 cluster; this Jackdaw runs PostgreSQL \d+\. Nothing was changed/,
    )
    writeFileSync(versionFile, version)

    const conf = path.join(dir, 'postgres', 'postgresql.conf')
    const settings = readFileSync(conf, 'utf8')
    appendFileSync(conf, 'shared_buffers = lots\n')
    const broken = await runToEnd(['src/main.ts'], envOf(dir))
    expect(broken.code).toBe(1)
    expect(broken.output).toMatch(/PostgreSQL did not start/)
    // its own words, from its log
    expect(broken.output).toMatch(/shared_buffers/)
    writeFileSync(conf, settings)

    const again = await start(dir)
    expect((await call(again, 'GET', `/v2/customers/${customer.body.id}`)).body.email).toBe('bo@example.com')
    await again.service.stop()
  }, 180_000)

  it('listens on a loopback port where the data directory is too deep for a socket', async () => {
    const dir = path.join(dataDir(), 'a-directory-name-long-enough'.repeat(4))
    const s = await start(dir)
    expect(s.service.output()).toMatch(/psql -h 127\.0\.0\.1 -p \d+ -U postgres jackdaw \(password in /)
    expect((await call(s, 'GET', '/v2/me')).status).toBe(200)
    expect(await s.service.stop()).toBe(0)
  }, 120_000)

  it('refuses a data directory it cannot make, saying why', async () => {
    // no directory can be made under /proc: the start ends at once rather than trying forever
    const dir = '/proc/jackdaw-data-dir/data'
    const run = await runToEnd(['src/main.ts'], envOf(dir))
    expect(run.code).toBe(1)
    expect(run.output).toContain(`cannot make the data directory ${dir}`)
  }, 60_000)

  // a disk of its own to fill, where the machine lets this process mount one (root, as in CI)
  const small = path.join(root, 'small-disk')
  mkdirSync(small)
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', small]).status === 0
  afterAll(() => {
    if (mounted) spawnSync('umount', [small])
  })

  it.runIf(mounted)(
    'refuses a data directory on a full disk, saying so, before starting anything',
    async () => {
      writeFileSync(path.join(small, 'filler'), Buffer.alloc(1024 * 1024 - 4096))
      const dir = path.join(small, 'data')
      const run = await runToEnd(['src/main.ts'], envOf(dir))
      expect(run.code).toBe(1)
      expect(run.output).toContain(`cannot write in the data directory ${dir}: the disk is full`)
      expect(run.output).toMatch(/PostgreSQL needs at least 64 MB/)
      expect(existsSync(path.join(dir, 'postgres'))).toBe(false)
    },
    60_000,
  )

  it('refuses a data directory that is a file', async () => {
    const file = path.join(root, 'a-file')
    writeFileSync(file, '')
    const run = await runToEnd(['src/main.ts'], envOf(file))
    expect(run.code).toBe(1)
    expect(run.output).toContain(`JACKDAW_DATA_DIR names ${file}, which is not a directory`)
  }, 60_000)
})
