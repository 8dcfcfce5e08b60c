/**
 * `npm run bench -- --compare <ref>` (or BENCH_COMPARE_REF=<ref> npm run bench): this tree and
 * another git ref side by side, in one run, on PostgreSQL. The ref is checked out into a temporary
 * worktree, installed and built there; both services then run at once, each on a database of its
 * own, and every operation loads them in turn, alternating which goes first, so that both see the
 * machine as it is at that moment. Prints a table of both rates and their ratio.
 *
 * BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS and BENCH_OPS (source, charge, list, retrieve,
 * update) as for the full run; BENCH_STORES picks pg1 and/or pg2 (one or two processes).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { BENCH_DATABASE_URL } from './database-url.js'

const argRef = process.argv[process.argv.indexOf('--compare') + 1]
const REF = process.argv.includes('--compare') ? argRef : process.env.BENCH_COMPARE_REF
if (!REF || REF.startsWith('-')) throw new Error('name the git ref to compare with: npm run bench -- --compare <ref>')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number)
const OPS = (process.env.BENCH_OPS ?? 'source,charge,list,retrieve,update').split(',')
const STORES = (process.env.BENCH_STORES ?? 'pg1,pg2').split(',').filter((s) => /^pg[12]$/.test(s))
const ROOT = path.resolve(import.meta.dirname, '..')
const CARD = { name: 'Bench Payer', number: '4242424242424242', exp_month: '12', exp_year: '2035', cvc: '123' }

interface Service {
  label: string
  child: ChildProcess
  url: string
  key: string
  dropDatabase: () => Promise<void>
}

interface Measured {
  rps: number
  p99: number
  non2xx: number
}

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
})

const sh = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] })

/** The ref in a worktree of its own, installed and built. */
function checkOut(ref: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-compare-'))
  sh('git', ['worktree', 'add', '--detach', dir, ref], ROOT)
  const remove = () => {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' })
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], dir)
    sh('npm', ['run', 'build'], dir)
  } catch (err) {
    remove()
    throw err
  }
  return { dir, remove }
}

async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `jackdaw_compare_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(BENCH_DATABASE_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: BENCH_DATABASE_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

/** The service of the tree at `dir`, with `workers` processes, on a fresh database. */
async function startService(label: string, dir: string, workers: number, port: number): Promise<Service> {
  const db = await freshDatabase()
  const child = spawn(process.execPath, ['dist/cli.js', 'serve', '--workers', String(workers)], {
    cwd: dir,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      // the rate limit would cap the load at its own number; the benchmark measures the service
      JACKDAW_RATE_LIMIT: '1000000000',
      DATABASE_URL: db.url,
      DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE ?? '20',
      JACKDAW_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (d: Buffer) => {
      out += d.toString()
      const url = out.match(/listening on (http:\/\/[^\s(]+)/)?.[1]
      const key = out.match(/test secret key: (\S+)/)?.[1]
      if (url && key) {
        child.stdout?.off('data', onData)
        child.stderr?.off('data', onData)
        resolve({ label, child, url, key, dropDatabase: db.drop })
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.on('exit', (code) => reject(new Error(`${label} exited (${code}) before it listened:\n${out}`)))
  })
}

async function stopService(s: Service): Promise<void> {
  if (s.child.exitCode === null) {
    const done = new Promise((r) => s.child.on('exit', r))
    s.child.kill('SIGTERM')
    await done
  }
  await s.dropDatabase()
}

async function api(s: Service, method: string, p: string, body?: unknown) {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return (await res.json()) as { id: string }
}

/** What an operation's load needs of a service: its customers, and the fresh sources charges take. */
interface Fixture {
  customers: string[]
  fresh: string[]
  turn: number
}

async function fixture(s: Service): Promise<Fixture> {
  const customers: string[] = []
  for (let i = 0; i < 100; i++) {
    customers.push((await api(s, 'POST', '/v2/customers/', { email: `b${i}@example.com`, description: 'Bench' })).id)
  }
  for (let i = 0; i < 25; i++) {
    const src = await api(s, 'POST', '/v2/sources/', { type: 'card', card: CARD })
    await api(s, 'POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: src.id })
  }
  return { customers, fresh: [], turn: 0 }
}

/** The autocannon options of one operation against one service. */
function loadOf(op: string, s: Service, f: Fixture): Partial<autocannon.Options> {
  const headers = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }
  const customer = () => `/v2/customers/${f.customers[f.turn++ % f.customers.length]}`
  switch (op) {
    case 'source':
      return {
        url: `${s.url}/v2/sources/`,
        method: 'POST',
        headers,
        body: JSON.stringify({ type: 'card', card: CARD }),
      }
    case 'charge':
      return {
        url: `${s.url}/v2/charges/`,
        method: 'POST',
        headers,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({ amount: 1000, currency: 'usd', source: f.fresh.pop() ?? 'src_none' }),
            }),
          },
        ],
      }
    case 'list':
      return { url: `${s.url}/v2/charges/?limit=20`, headers }
    case 'retrieve':
      return {
        url: `${s.url}${customer()}`,
        headers,
        requests: [{ setupRequest: (r) => ({ ...r, path: customer() }) }],
      }
    case 'update':
      return {
        url: `${s.url}${customer()}`,
        method: 'PUT',
        headers,
        requests: [
          {
            setupRequest: (r) => ({
              ...r,
              path: customer(),
              body: JSON.stringify({ description: `Bench customer ${f.turn}`, metadata: { n: f.turn } }),
            }),
          },
        ],
      }
    default:
      throw new Error(`unknown operation ${op} (BENCH_OPS: source, charge, list, retrieve, update)`)
  }
}

async function run(options: Partial<autocannon.Options>, connections: number, seconds: number): Promise<Measured> {
  const result = await autocannon({ ...options, connections, duration: seconds } as autocannon.Options)
  return { rps: Math.round(result.requests.average), p99: result.latency.p99, non2xx: result.non2xx }
}

/** Sources made beforehand for the charge runs, a few more than a run can take. */
async function stockSources(s: Service, f: Fixture, connections: number): Promise<void> {
  const made = await run(
    {
      ...loadOf('source', s, f),
      requests: [
        {
          onResponse: (status: number, body: string) => {
            if (status === 200) f.fresh.push(JSON.parse(body).id)
          },
        },
      ],
    } as unknown as Partial<autocannon.Options>,
    connections,
    SECONDS + WARMUP_SECONDS + 1,
  )
  if (made.non2xx > 0) throw new Error(`${s.label}: ${made.non2xx} sources were refused`)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number

async function compare(services: [Service, Service]) {
  const fixtures = await Promise.all(services.map(fixture))
  const rows: string[] = []
  for (const op of OPS) {
    for (const c of CONNECTIONS) {
      const rates: number[][] = [[], []]
      const p99s: number[][] = [[], []]
      let failed = 0
      for (let round = 0; round < ROUNDS; round++) {
        // the one measured first alternates: a machine that drifts favours neither
        const order = round % 2 === 0 ? [0, 1] : [1, 0]
        for (const i of order) {
          const s = services[i] as Service
          const f = fixtures[i] as Fixture
          if (op === 'charge') await stockSources(s, f, c)
          if (WARMUP_SECONDS > 0) await run(loadOf(op, s, f), c, WARMUP_SECONDS)
          const m = await run(loadOf(op, s, f), c, SECONDS)
          ;(rates[i] as number[]).push(m.rps)
          ;(p99s[i] as number[]).push(m.p99)
          failed += m.non2xx
          process.stdout.write(`  ${s.label}: ${op} at ${c} connections, round ${round + 1}: ${m.rps} req/s\n`)
        }
      }
      const [a, b] = rates.map(median) as [number, number]
      const [pa, pb] = p99s.map(median) as [number, number]
      const ratio = b > 0 ? `${((a / b - 1) * 100).toFixed(1)}%` : 'n/a'
      rows.push(`| ${op} | ${c} | ${a} | ${b} | ${ratio} | ${pa} | ${pb} | ${failed} |`)
    }
  }
  return rows
}

const checkout = checkOut(REF)
try {
  for (const store of STORES) {
    const workers = Number(store.slice(2))
    const services: [Service, Service] = [
      await startService('this tree', ROOT, workers, 18300 + workers),
      await startService(REF, checkout.dir, workers, 18310 + workers),
    ]
    try {
      const rows = await compare(services)
      process.stdout.write(
        [
          '',
          `## PostgreSQL, ${workers} process${workers > 1 ? 'es' : ''}: this tree against ${REF}`,
          `(BENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS}; medians of the rounds)`,
          '',
          `| operation | connections | req/s this tree | req/s ${REF} | difference | p99 ms this tree | p99 ms ${REF} | non-2xx |`,
          '|---|---|---|---|---|---|---|---|',
          ...rows,
          '',
        ].join('\n'),
      )
    } finally {
      for (const s of services) await stopService(s)
    }
  }
} finally {
  checkout.remove()
}
process.exit(0)
