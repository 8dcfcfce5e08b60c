import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { runToEnd, runTs, serversUnder, stopServersUnder } from '../helpers/process.js'
import { testServerUrl } from '../helpers/store.js'

// starts the service cannot make: each stops with a message naming what to change, no stack
// trace, and leaves nothing running
const root = mkdtempSync(path.join(tmpdir(), 'jackdaw-refusals-'))
// the server's account (the service runs as root here) passes through to the data directories
chmodSync(root, 0o711)
let made = 0
const dataDir = () => path.join(root, `d${++made}`)

afterAll(() => {
  stopServersUnder(root)
  rmSync(root, { recursive: true, force: true })
})

const embedded = (dir: string, extra: Record<string, string | undefined> = {}) => ({
  JACKDAW_DATA_DIR: dir,
  PORT: '0',
  DATABASE_URL: undefined,
  JACKDAW_ENCRYPTION_KEY: undefined,
  ...extra,
})

const STACK_FRAME = /\n\s+at /

async function busyPort(): Promise<{ port: number; close: () => void }> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() }
}

/** Whether every one of `pids` has ended within a few seconds. */
async function allEnd(pids: number[]): Promise<boolean> {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 50))
  return !pids.some(alive)
}

/** A new empty database on the run's PostgreSQL, and how to drop it. */
async function newDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `jackdaw_refusals_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: testServerUrl() })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(testServerUrl())
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    },
  }
}

describe('JACKDAW_ENCRYPTION_KEY other than the one the store was written with', () => {
  it('is refused at start on PostgreSQL at DATABASE_URL, by the service and by the commands', async () => {
    const database = await newDatabase()
    const env = { DATABASE_URL: database.url, PORT: '0', JACKDAW_DATA_DIR: root }
    try {
      const keyA = randomBytes(32).toString('base64')
      const created = await runToEnd(['src/cli.ts', 'account', 'create', '--name', 'Shop', '--json'], {
        ...env,
        JACKDAW_ENCRYPTION_KEY: keyA,
      })
      expect(created.code, created.output).toBe(0)

      const keyB = randomBytes(32).toString('base64')
      const service = await runToEnd(['src/main.ts'], { ...env, JACKDAW_ENCRYPTION_KEY: keyB })
      expect(service.code, service.output).toBe(1)
      expect(service.output).toMatch(/JACKDAW_ENCRYPTION_KEY/)
      expect(service.output).not.toMatch(/listening on/)
      expect(service.output).not.toMatch(STACK_FRAME)

      const command = await runToEnd(['src/cli.ts', 'account', 'create', '--name', 'Other'], {
        ...env,
        JACKDAW_ENCRYPTION_KEY: keyB,
      })
      expect(command.code, command.output).toBe(1)
      expect(command.output).toMatch(/JACKDAW_ENCRYPTION_KEY/)
      expect(command.output).not.toMatch(/sk_test_/)
      expect(command.output).not.toMatch(STACK_FRAME)

      // the right key still opens it
      const again = runTs(['src/main.ts'], { ...env, JACKDAW_ENCRYPTION_KEY: keyA })
      try {
        await again.waitFor(/listening on http/, 60_000)
      } finally {
        await again.stop()
      }
    } finally {
      await database.drop()
    }
  }, 120_000)

  it('is refused at start on the embedded store, which it leaves stopped', async () => {
    const dir = dataDir()
    const first = runTs(['src/main.ts'], embedded(dir))
    await first.waitFor(/test secret key/, 60_000)
    expect(await first.stop()).toBe(0)

    const run = await runToEnd(
      ['src/main.ts'],
      embedded(dir, { JACKDAW_ENCRYPTION_KEY: randomBytes(32).toString('base64') }),
    )
    expect(run.code, run.output).toBe(1)
    expect(run.output).toMatch(/JACKDAW_ENCRYPTION_KEY/)
    expect(run.output).not.toMatch(STACK_FRAME)
    expect(await allEnd(serversUnder(dir))).toBe(true)
    expect(existsSync(path.join(dir, 'postgres', 'postmaster.pid'))).toBe(false)
  }, 120_000)
})

describe('a start that fails once the embedded server is up', () => {
  it('stops that server: the port in use', async () => {
    const dir = dataDir()
    const busy = await busyPort()
    try {
      const run = await runToEnd(['src/main.ts'], embedded(dir, { PORT: String(busy.port) }))
      expect(run.code, run.output).toBe(1)
      expect(run.output).toMatch(/the port is in use/)
      expect(await allEnd(serversUnder(dir))).toBe(true)
      expect(existsSync(path.join(dir, 'postgres', 'postmaster.pid'))).toBe(false)
    } finally {
      busy.close()
    }
  }, 90_000)
})

describe('serve --workers N whose processes cannot start', () => {
  it('stops with their reason rather than starting them again and again', async () => {
    const dir = dataDir()
    const busy = await busyPort()
    const service = runTs(['src/cli.ts', 'serve', '--workers', '2'], embedded(dir, { PORT: String(busy.port) }))
    try {
      const code = await Promise.race([
        service.exited,
        new Promise((resolve) => setTimeout(() => resolve('still running'), 60_000)),
      ])
      expect(code, service.output()).toBe(1)
      expect(service.output()).toMatch(/the port is in use/)
      expect(service.output()).not.toMatch(/starting another/)
      expect(await allEnd(serversUnder(dir))).toBe(true)
    } finally {
      await service.stop()
      busy.close()
    }
  }, 90_000)
})

describe('a DATABASE_URL the service cannot use', () => {
  const key = randomBytes(32).toString('base64')
  const server = () => new URL(testServerUrl())
  const elsewhere = (host: string) => `postgres://postgres@${host}/test`
  const cases: [string, () => string][] = [
    ['a port out of range', () => elsewhere('127.0.0.1:99999')],
    [
      'a database that does not exist',
      () => Object.assign(server(), { pathname: '/no_such_database_here' }).toString(),
    ],
    [
      'a role that does not exist',
      () => Object.assign(server(), { username: 'nobody_here', password: 'pw' }).toString(),
    ],
    ['a host that does not resolve', () => elsewhere('no-such-host.invalid:5432')],
  ]
  for (const [what, url] of cases) {
    it(`is refused naming DATABASE_URL, without a stack trace: ${what}`, async () => {
      const run = await runToEnd(['src/main.ts'], { DATABASE_URL: url(), JACKDAW_ENCRYPTION_KEY: key, PORT: '0' })
      expect(run.code, run.output).toBe(1)
      expect(run.output).toMatch(/DATABASE_URL/)
      expect(run.output).not.toMatch(STACK_FRAME)
      expect(run.output).not.toMatch(/:pw@/)
    }, 60_000)
  }
})
