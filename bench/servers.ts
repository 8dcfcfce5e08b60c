/**
 * The processes a benchmark run loads: the service and the bare route, started and stopped, and
 * the PostgreSQL databases the service runs on.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import pg from 'pg'
import { watchService } from './cpu.js'
import { PG_URL, ROOT, SERVICE_ENTRY, SERVICE_NODE_ARGS, SERVICE_OUTPUT } from './settings.js'

export interface Server {
  child: ChildProcess
  url: string
  key?: string | undefined
}

// A run that fails part way (a service that does not start) must not leave the bare route or a
// service behind: the next run would find its port taken.
const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
})

const isServiceCommand = (cmd: string[]) => cmd[0] === SERVICE_ENTRY || /^dist\/(cli|main)\.js$/.test(cmd[0] ?? '')

export function start(cmd: string[], env: Record<string, string>): Promise<Server> {
  return new Promise((resolve, reject) => {
    const args = isServiceCommand(cmd) ? [...SERVICE_NODE_ARGS, ...cmd] : cmd
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      // the rate limit would cap the load at its own number; the benchmark measures the service
      env: { ...process.env, LOG_LEVEL: 'warn', JACKDAW_RATE_LIMIT: '1000000000', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.add(child)
    child.on('exit', () => children.delete(child))
    let out = ''
    let started = false
    const onData = (d: Buffer) => {
      // only what the start prints is read; after it the text is kept short, for an exit's message
      out = (out + d.toString()).slice(started ? -4096 : 0)
      if (started) return
      const url = out.match(/listening on (http:\/\/[^\s(]+)/)?.[1]
      const key = out.match(/test secret key: (\S+)/)?.[1]
      if (url && (key || !isServiceCommand(cmd))) {
        started = true
        watchService(child.pid)
        resolve({ child, url, key })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    if (SERVICE_OUTPUT) {
      const copy = createWriteStream(SERVICE_OUTPUT, { flags: 'a' })
      child.stdout.pipe(copy, { end: false })
      child.stderr.pipe(copy, { end: false })
      child.on('exit', () => copy.end())
    }
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)))
    setTimeout(() => reject(new Error(`no start within 60 s: ${out}`)), 60_000).unref()
  })
}

export async function stop(s: Server) {
  if (s.child.exitCode !== null) return
  const done = new Promise((r) => s.child.on('exit', r))
  s.child.kill('SIGTERM')
  await done
}

export async function api(s: Server, method: string, p: string, body?: unknown) {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies
  return (await res.json()) as Record<string, any>
}

export async function postgresAvailable(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: PG_URL })
  try {
    await c.connect()
    const v = await c.query('SHOW server_version')
    const sync = await c.query('SHOW synchronous_commit')
    const fsync = await c.query('SHOW fsync')
    return `PostgreSQL ${v.rows[0].server_version} (synchronous_commit=${sync.rows[0].synchronous_commit}, fsync=${fsync.rows[0].fsync})`
  } catch {
    return undefined
  } finally {
    await c.end().catch(() => {})
  }
}

export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `jackdaw_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(PG_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      if (process.env.BENCH_KEEP_DATABASE === '1') {
        console.log(`  kept ${name} (BENCH_KEEP_DATABASE=1)`)
        return
      }
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

/**
 * The bare route, up for a section. It starts before the service, so that the cores counted as the
 * service's are the service's.
 */
export function startBare(): Promise<Server> {
  return start(['--import', 'tsx', 'bench/bare.ts'], { PORT: '18199' })
}
