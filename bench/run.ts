/**
 * `npm run bench`: starts the service (the embedded PostgreSQL; an external PostgreSQL with 1 and
 * 2 processes) and a bare Fastify route, loads each with autocannon at 10 and 50 connections, and
 * writes the numbers to bench/RESULTS.md, with the embedded store's start times and its memory at
 * rest. BENCH_SECONDS sets the length of each run (default 5).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { BENCH_DATABASE_URL } from './database-url.js'
import { type Memory, restingMemory, timeToFirstAnswer } from './embedded.js'

// `npm run bench -- --compare <ref>` (or BENCH_COMPARE_REF): this tree beside another git ref
if (process.argv.includes('--compare') || process.env.BENCH_COMPARE_REF) await import('./compare.js')

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
// Each measured run follows an unmeasured one of the same load: a process that has just started
// spends its first seconds compiling hot code and opening its pool's connections, and a run that
// counts them measures the start, not the service (a cold 5 s run of create source with 2 processes
// gave 2 617 req/s, the two runs right after it 4 288 and 3 872).
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
// Each operation is measured BENCH_ROUNDS times, each time right after the bare route, and the
// round with the median share is reported with the range of all, so that one lucky or unlucky pair
// of runs neither makes nor breaks a figure.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('BENCH_ROUNDS must be a whole number, 1 or more')
const PG_URL = BENCH_DATABASE_URL
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number)
// BENCH_STORES (embedded, pg1, pg2) and BENCH_OPS (source, charge, list, retrieve, update) narrow a
// run while working on one path; RESULTS.md is written only by a full run.
const STORES = process.env.BENCH_STORES?.split(',')
const OPS = process.env.BENCH_OPS?.split(',')
const PARTIAL = STORES !== undefined || OPS !== undefined || process.env.BENCH_CONNECTIONS !== undefined
const wanted = (op: string) => !OPS || OPS.includes(op)
const ROOT = path.resolve(import.meta.dirname, '..')

interface Server {
  child: ChildProcess
  url: string
  key?: string | undefined
}

// Node flags for the service's processes, to profile them (`--cpu-prof --cpu-prof-dir=DIR`)
const SERVICE_NODE_ARGS = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []
// where the services' own output goes as well (`--trace-gc` in BENCH_SERVICE_NODE_ARGS, say)
const SERVICE_OUTPUT = process.env.BENCH_SERVICE_OUTPUT

// A run that fails part way (a service that does not start) must not leave the bare route or a
// service behind: the next run would find its port taken.
const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
})

const isServiceCommand = (cmd: string[]) => /^dist\/(cli|main)\.js$/.test(cmd[0] ?? '')

function start(cmd: string[], env: Record<string, string>): Promise<Server> {
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
        servicePids = new Set(child.pid === undefined ? [] : [child.pid])
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

async function stop(s: Server) {
  if (s.child.exitCode !== null) return
  const done = new Promise((r) => s.child.on('exit', r))
  s.child.kill('SIGTERM')
  await done
}

interface Row {
  name: string
  connections: number
  rps: number
  p50: number
  p99: number
  non2xx: number
  /** cores used during the run by the service's processes, by PostgreSQL, by the load generator */
  cpu: { service: number; postgres: number; load: number }
  /** the bare route's rate at the same connections, measured right before */
  ceiling: number
  /** the share of every round, lowest first */
  shares: number[]
}

/** The processes whose command line matches, by pid, from /proc (Linux only). */
function processes(match: (cmdline: string, pid: number) => boolean): number[] {
  let pids: string[] = []
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    return []
  }
  return pids.map(Number).filter((pid) => {
    try {
      return match(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '), pid)
    } catch {
      return false // the process ended while being read
    }
  })
}

/** CPU seconds so far of a process or thread (`/proc/PID` or `/proc/PID/task/TID`). */
function taskCpu(dir: string): number | undefined {
  try {
    const stat = readFileSync(`${dir}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined // it ended while being read
  }
}

/** CPU seconds so far of each process whose command line matches, by pid. */
function cpuSeconds(match: (cmdline: string, pid: number) => boolean): Map<number, number> {
  const seconds = new Map<number, number>()
  for (const pid of processes(match)) {
    const cpu = taskCpu(`/proc/${pid}`)
    if (cpu !== undefined) seconds.set(pid, cpu)
  }
  return seconds
}

/**
 * CPU seconds used between two readings: by the processes alive at the second, from the first
 * reading or from their start. A process that exits meanwhile (an idle database connection
 * closed) takes its time with it and is left out, rather than counted as time given back.
 */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, s] of after) total += s - (before.get(pid) ?? 0)
  return total
}

let servicePids = new Set<number>()
const serviceCpu = () => cpuSeconds(isService)
const childOf = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return servicePids.has(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
  } catch {
    return false
  }
}
const isService = (_: string, pid: number) => servicePids.has(pid) || childOf(pid)
// backends name themselves `postgres: …`; a server is its binary's path, with -D
const isPostgres = (cmd: string) => cmd.startsWith('postgres') || /\/postgres -D /.test(cmd)
const postgresCpu = () => cpuSeconds(isPostgres)
const loadCpu = () => {
  const u = process.cpuUsage()
  return new Map([[process.pid, (u.user + u.system) / 1e6]])
}

async function loadOnce(
  name: string,
  url: string,
  connections: number,
  opts: Partial<autocannon.Options> = {},
): Promise<Row> {
  if (WARMUP_SECONDS > 0) await autocannon({ url, connections, duration: WARMUP_SECONDS, pipelining: 1, ...opts })
  const before = [serviceCpu(), postgresCpu(), loadCpu()] as const
  const started = performance.now()
  // without a callback autocannon answers with its run, an emitter that is also a promise of the result
  const run = autocannon({
    url,
    connections,
    duration: SECONDS,
    pipelining: 1,
    ...opts,
  }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>
  // the ceiling is never traced: tracing costs the load generator a little on every answer
  const measured = name !== 'bare route'
  const traced = TRACE && measured
  const slow = traced ? traceSlowSeconds(run) : undefined
  const threads = THREADS && measured ? await traceThreads() : undefined
  const commits = traced && probeDatabase ? await probeCommits(probeDatabase) : undefined
  const result = await run
  const slowestCommits = await commits?.stop()
  const wall = (performance.now() - started) / 1000
  const after = [serviceCpu(), postgresCpu(), loadCpu()] as const
  const cores = (i: 0 | 1 | 2) => Math.round((100 * cpuBetween(before[i], after[i])) / wall) / 100
  const row = {
    cpu: { service: cores(0), postgres: cores(1), load: cores(2) },
    name,
    connections,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
    ceiling: 0,
    shares: [],
  }
  if (slow) process.stdout.write(slow(slowestCommits))
  if (threads) process.stdout.write(await threads(result.requests.total))
  process.stdout.write(
    `  ${name} @${connections}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, non-2xx ${row.non2xx}, ` +
      `cores: service ${row.cpu.service}, postgres ${row.cpu.postgres}, load ${row.cpu.load}\n`,
  )
  return row
}

// BENCH_THREADS=1 prints, for each measured run, where a request's CPU went: the service's main
// threads, its other threads and PostgreSQL's processes, with how often each kind slept (voluntary
// context switches) and was preempted, and on PostgreSQL the write transactions a request
const THREADS = process.env.BENCH_THREADS === '1'

interface ThreadCounts {
  cpu: number
  slept: number
  preempted: number
}
type ThreadKind = 'main' | 'other' | 'postgres'

function threadCounts(): Record<ThreadKind, ThreadCounts> {
  const counts = {
    main: { cpu: 0, slept: 0, preempted: 0 },
    other: { cpu: 0, slept: 0, preempted: 0 },
    postgres: { cpu: 0, slept: 0, preempted: 0 },
  }
  const add = (kind: ThreadKind, dir: string) => {
    const cpu = taskCpu(dir)
    let status: string
    try {
      status = readFileSync(`${dir}/status`, 'utf8')
    } catch {
      return
    }
    if (cpu === undefined) return
    counts[kind].cpu += cpu
    counts[kind].slept += Number(status.match(/^voluntary_ctxt_switches:\s+(\d+)/m)?.[1] ?? 0)
    counts[kind].preempted += Number(status.match(/^nonvoluntary_ctxt_switches:\s+(\d+)/m)?.[1] ?? 0)
  }
  for (const pid of processes(isService)) {
    let tids: string[] = []
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {}
    for (const tid of tids) add(tid === String(pid) ? 'main' : 'other', `/proc/${pid}/task/${tid}`)
  }
  for (const pid of processes(isPostgres)) add('postgres', `/proc/${pid}`)
  return counts
}

/** The transaction id PostgreSQL hands out next: write transactions between two readings. */
async function nextTransactionId(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return Number((await c.query<{ id: string }>('SELECT txid_current()::text AS id')).rows[0]?.id)
  } finally {
    await c.end()
  }
}

async function traceThreads(): Promise<(requests: number) => Promise<string>> {
  const before = threadCounts()
  const url = probeDatabase
  const firstId = url ? await nextTransactionId(url) : undefined
  return async (requests) => {
    const after = threadCounts()
    // the reading's own transaction is one of the ids between the two
    const writes = url && firstId !== undefined ? (await nextTransactionId(url)) - firstId - 1 : undefined
    const per = (kind: ThreadKind) => {
      const d = (k: keyof ThreadCounts) => (after[kind][k] - before[kind][k]) / requests
      return { cpu: Math.round(d('cpu') * 1e6), slept: d('slept').toFixed(2), preempted: d('preempted').toFixed(2) }
    }
    const [main, other, postgres] = [per('main'), per('other'), per('postgres')]
    const transactions = writes === undefined ? '' : `; ${(writes / requests).toFixed(3)} write transactions`
    return (
      `    a request: service's main threads ${main.cpu} µs (slept ${main.slept}, preempted ${main.preempted}), ` +
      `its other threads ${other.cpu} µs; PostgreSQL ${postgres.cpu} µs (slept ${postgres.slept}, ` +
      `preempted ${postgres.preempted})${transactions}\n`
    )
  }
}

// BENCH_TRACE=1 prints, for each measured run, every second in which a request took over 25 ms, with
// the clock time, to line up a run's slow tail with what the machine did at that second, and on
// PostgreSQL the slowest commit of a probe beside the load in that second
const TRACE = process.env.BENCH_TRACE === '1'
const SLOW_MS = 25

function traceSlowSeconds(run: autocannon.Instance): (slowestCommits?: Map<number, number>) => string {
  const seconds = new Map<number, { count: number; slow: number; max: number }>()
  run.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
    const at = Math.floor(Date.now() / 1000)
    const s = seconds.get(at) ?? { count: 0, slow: 0, max: 0 }
    s.count++
    if (ms > SLOW_MS) s.slow++
    if (ms > s.max) s.max = ms
    seconds.set(at, s)
  })
  return (slowestCommits) =>
    [...seconds]
      .filter(([, s]) => s.max > SLOW_MS)
      .map(([at, s]) => {
        const commit = slowestCommits?.get(at)
        const probe = commit === undefined ? '' : `; the probe's slowest commit ${commit.toFixed(1)} ms`
        return `    ${new Date(at * 1000).toISOString().slice(11, 19)}: ${s.count} answers, ${s.slow} over ${SLOW_MS} ms, slowest ${Math.round(s.max)} ms${probe}\n`
      })
      .join('')
}

// the database of the service under load, for the commit probe; none for the embedded store
let probeDatabase: string | undefined

/**
 * A commit every 5 ms on a connection of its own, beside the load: a one-row insert into a table
 * of the benchmark's, so that each commit waits for its WAL to reach the disk as the service's do.
 * Its slowest commit in each second tells whether a slow second of the service was the database
 * waiting for the disk.
 */
async function probeCommits(url: string): Promise<{ stop: () => Promise<Map<number, number>> }> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query('CREATE TABLE IF NOT EXISTS bench_commit_probe (at timestamptz NOT NULL DEFAULT now())')
  const slowest = new Map<number, number>()
  let running = true
  const loop = (async () => {
    while (running) {
      const at = Math.floor(Date.now() / 1000)
      const started = performance.now()
      await c.query('INSERT INTO bench_commit_probe DEFAULT VALUES')
      const ms = performance.now() - started
      if (ms > (slowest.get(at) ?? 0)) slowest.set(at, ms)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      await c.end()
      return slowest
    },
  }
}

const share = (r: Row) => (100 * r.rps) / r.ceiling

async function api(s: Server, method: string, p: string, body?: unknown) {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies
  return (await res.json()) as Record<string, any>
}

const CARD = { name: 'Bench Payer', number: '4242424242424242', exp_month: '12', exp_year: '2035', cvc: '123' }

/**
 * The machine's speed drifts within minutes (a section's ceiling has been half the next one's), so
 * each run of an operation follows a run of the bare route at the same connections, and its share
 * is of that: the two see the machine as it is at that moment.
 */
async function measureService(label: string, s: Server, bareUrl: string): Promise<Row[]> {
  const rows: Row[] = []
  const load = async (...args: Parameters<typeof loadOnce>): Promise<Row> => {
    const rounds: Row[] = []
    for (let i = 0; i < ROUNDS; i++) {
      const bare = await loadOnce('bare route', bareUrl, args[2])
      const row = { ...(await loadOnce(...args)), ceiling: bare.rps }
      process.stdout.write(`    ${share(row).toFixed(1)}% of the bare route\n`)
      rounds.push(row)
    }
    rounds.sort((a, b) => share(a) - share(b))
    const median = rounds[(rounds.length - 1) >> 1] as Row
    return { ...median, shares: rounds.map(share) }
  }
  const auth = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }
  const sourceBody = JSON.stringify({ type: 'card', card: CARD })
  // reads and updates go round a hundred customers, as a shop's traffic would; one customer
  // updated by every connection at once would measure waiting on one row's lock instead
  const customers: string[] = []
  for (let i = 0; i < 100; i++) {
    customers.push(
      (await api(s, 'POST', '/v2/customers/', { email: `bench${i}@example.com`, description: 'Bench' })).id,
    )
  }
  let turn = 0
  const nextCustomer = () => `/v2/customers/${customers[turn++ % customers.length]}`
  for (let i = 0; i < 25; i++) {
    const src = await api(s, 'POST', '/v2/sources/', { type: 'card', card: CARD })
    await api(s, 'POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: src.id })
  }
  const fresh: string[] = []
  // the charge runs consume the sources made here, so they run for charges as well
  if (wanted('source') || wanted('charge'))
    for (const c of CONNECTIONS) {
      const row = await load(`${label}: create source`, `${s.url}/v2/sources/`, c, {
        method: 'POST',
        headers: auth,
        body: sourceBody,
        // the sources made here are the fresh ones the charge runs consume
        requests: [
          {
            onResponse: (status: number, body: string) => {
              if (status === 200) fresh.push(JSON.parse(body).id)
            },
          },
        ],
      } as unknown as Partial<autocannon.Options>)
      if (wanted('source')) rows.push(row)
    }
  if (wanted('charge'))
    for (const c of CONNECTIONS) {
      rows.push(
        await load(`${label}: create charge`, `${s.url}/v2/charges/`, c, {
          method: 'POST',
          headers: auth,
          requests: [
            {
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                body: JSON.stringify({ amount: 1000, currency: 'usd', source: fresh.pop() ?? 'src_none' }),
              }),
            },
          ],
        } as unknown as Partial<autocannon.Options>),
      )
    }
  if (wanted('list'))
    for (const c of CONNECTIONS) {
      rows.push(await load(`${label}: list charges`, `${s.url}/v2/charges/?limit=20`, c, { headers: auth }))
    }
  if (wanted('retrieve'))
    for (const c of CONNECTIONS) {
      rows.push(
        await load(`${label}: retrieve customer`, `${s.url}${nextCustomer()}`, c, {
          headers: auth,
          requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: nextCustomer() }) }],
        } as unknown as Partial<autocannon.Options>),
      )
    }
  let n = 0
  if (wanted('update'))
    for (const c of CONNECTIONS) {
      rows.push(
        await load(`${label}: update customer`, `${s.url}${nextCustomer()}`, c, {
          method: 'PUT',
          headers: auth,
          requests: [
            {
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                path: nextCustomer(),
                body: JSON.stringify({ description: `Bench customer ${n++}`, metadata: { n } }),
              }),
            },
          ],
        } as unknown as Partial<autocannon.Options>),
      )
    }
  return rows
}

async function postgresAvailable(): Promise<string | undefined> {
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

async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
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
function startBare(): Promise<Server> {
  return start(['--import', 'tsx', 'bench/bare.ts'], { PORT: '18199' })
}

const sections: { title: string; rows: Row[] }[] = []

/** The embedded store's start, from an empty data directory and again, in seconds: each round's. */
const starts = { empty: [] as number[], restart: [] as number[] }
let resting: { service: Memory; postgres: Memory } | undefined
const REST_SECONDS = Number(process.env.BENCH_REST_SECONDS ?? 10)

if (!STORES || STORES.includes('embedded')) {
  for (let i = 0; i < ROUNDS; i++) {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-bench-start-'))
    starts.empty.push(await timeToFirstAnswer(empty, 18110))
    starts.restart.push(await timeToFirstAnswer(empty, 18110))
    rmSync(empty, { recursive: true, force: true })
    process.stdout.write(
      `  embedded start: empty ${starts.empty.at(-1)?.toFixed(2)} s, restart ${starts.restart.at(-1)?.toFixed(2)} s\n`,
    )
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-bench-'))
  const bare = await startBare()
  // as `npm start` runs it: one process, owning its server
  const s = await start(['dist/main.js'], { JACKDAW_DATA_DIR: dataDir, PORT: '18100' })
  sections.push({
    title: 'Embedded PostgreSQL (the default), 1 process',
    rows: await measureService('embedded', s, `${bare.url}/bare`),
  })
  // at rest: the pools' idle connections closed, the last writes checkpointed in time
  await new Promise((r) => setTimeout(r, REST_SECONDS * 1000))
  resting = restingMemory(s.child.pid as number, dataDir)
  process.stdout.write(`  at rest: ${JSON.stringify(resting)}\n`)
  await stop(s)
  await stop(bare)
  rmSync(dataDir, { recursive: true, force: true })
}

const pgVersion = await postgresAvailable()
if (pgVersion) {
  for (const workers of [1, 2]) {
    if (STORES && !STORES.includes(`pg${workers}`)) continue
    const bare = await startBare()
    const db = await freshDatabase()
    const s = await start(['dist/cli.js', 'serve', '--workers', String(workers)], {
      DATABASE_URL: db.url,
      JACKDAW_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PORT: String(18100 + workers),
      DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE ?? '20',
    })
    probeDatabase = db.url
    sections.push({
      title: `PostgreSQL, ${workers} process${workers > 1 ? 'es' : ''}`,
      rows: await measureService(`postgres x${workers}`, s, `${bare.url}/bare`),
    })
    probeDatabase = undefined
    await stop(s)
    await stop(bare)
    await db.drop()
  }
}

const table = (rows: Row[]) =>
  [
    `| operation | connections | req/s | bare route req/s | share of bare route | shares of the ${ROUNDS} rounds | p50 ms | p99 ms | non-2xx | cores: service / PostgreSQL / load |`,
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name.split(': ')[1] ?? r.name} | ${r.connections} | ${r.rps} | ${r.ceiling} | ${share(r).toFixed(1)}% | ${r.shares.map((x) => x.toFixed(1)).join(', ')} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.cpu.service} / ${r.cpu.postgres} / ${r.cpu.load} |`,
    ),
  ].join('\n')

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] ?? 0
const seconds = (xs: number[]) => `${median(xs).toFixed(2)} s (rounds: ${xs.map((x) => x.toFixed(2)).join(', ')})`
const embeddedSection = sections.find((s) => s.title.startsWith('Embedded'))
const externalSection = sections.find((s) => s.title === 'PostgreSQL, 1 process')
const comparison =
  embeddedSection && externalSection
    ? [
        '## The embedded default against the external PostgreSQL, 1 process',
        '',
        'The same operations of this run; the embedded rate as a share of the external one.',
        '',
        '| operation | connections | embedded req/s | external req/s | embedded / external | p99 ms embedded / external |',
        '|---|---|---|---|---|---|',
        ...embeddedSection.rows.map((e) => {
          const x = externalSection.rows.find(
            (r) => r.name.split(': ')[1] === e.name.split(': ')[1] && r.connections === e.connections,
          )
          const ratio = x?.rps ? `${((100 * e.rps) / x.rps).toFixed(0)}%` : '-'
          return `| ${e.name.split(': ')[1]} | ${e.connections} | ${e.rps} | ${x?.rps ?? '-'} | ${ratio} | ${e.p99} / ${x?.p99 ?? '-'} |`
        }),
      ].join('\n')
    : ''
const startFigures = starts.empty.length
  ? [
      '## The embedded store: start and memory',
      '',
      `- From an empty data directory to the first answer (\`node dist/main.js\`, installed and built): ${seconds(starts.empty)}`,
      `- A restart on the directory it made, to the first answer: ${seconds(starts.restart)}`,
      resting
        ? `- At rest, ${REST_SECONDS} s after the benchmark: the service ${resting.service.rssMb} MB RSS (${resting.service.processes} processes), ` +
          `PostgreSQL ${resting.postgres.rssMb} MB RSS added up over its ${resting.postgres.processes} processes (${resting.postgres.pssMb} MB PSS, shared memory counted once); ` +
          `together ${resting.service.rssMb + resting.postgres.rssMb} MB RSS, ${resting.service.pssMb + resting.postgres.pssMb} MB PSS`
        : '',
    ].join('\n')
  : ''

const cpus = os.cpus()
const md = `# Benchmark results

Command: \`npm run bench\` (BENCH_SECONDS=${SECONDS} per run, BENCH_ROUNDS=${ROUNDS}). Generated ${new Date().toISOString()}.

Machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory,
${os.type()} ${os.release()}, Node ${process.version}; ${pgVersion ? `${pgVersion}, reached over ${new URL(PG_URL).searchParams.get('host') ? 'its Unix socket' : 'TCP'}` : 'PostgreSQL not reachable: its runs were skipped'}.
The load generator (autocannon, in the benchmark's own process) shares the machine's cores with
the service and the database, as the bare route does.

The ceiling is a bare Fastify route returning a fixed 1 KB JSON body, run at the same number of
connections right before each run of an operation; each share is of that run's rate. Each operation
ran ${ROUNDS} times (BENCH_ROUNDS), each after its own run of the bare route; a row is the round
with the median share, and lists the shares of all rounds. The cores are those of that round.

${[startFigures, comparison, ...sections.map((s) => `## ${s.title}\n\n${table(s.rows)}`)].filter(Boolean).join('\n\n')}
`
if (PARTIAL) {
  process.stdout.write(`\n${md}\n`)
  process.stdout.write('a partial run (BENCH_STORES, BENCH_OPS or BENCH_CONNECTIONS): RESULTS.md left as it was\n')
} else {
  writeFileSync(path.join(ROOT, 'bench/RESULTS.md'), md)
  process.stdout.write('wrote bench/RESULTS.md\n')
}
process.exit(0)
