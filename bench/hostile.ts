/**
 * `npm run bench:hostile`: what two kinds of hostile or neglected load cost PostgreSQL, on a fresh
 * database each (needs PostgreSQL; BENCH_DATABASE_URL as for bench/run.ts, the Unix socket unless told).
 *
 * 1. Unknown keys: `jackdaw serve` is sent GET /v2/me with a new random well-formed key each
 *    request, from 10 connections for 10 s. Printed: the answers by status, and how many times the
 *    API keys table was read (pg_stat_user_tables), that is, how many keys were looked up.
 * 2. Erasing old security codes: N sources (BENCH_SOURCES, default 300 000, one in three with a
 *    security code) a day and more old, then the erasure the recovery sweep runs, until it is through.
 *    Printed: statements, codes erased, the whole time and the median and slowest statement.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { idsBefore } from '../src/domain/ids.js'
import { newApiKey } from '../src/domain/keys.js'
import { openPostgres } from '../src/store/db.js'
import { migrate } from '../src/store/migrate.js'
import { eraseOldCardData } from '../src/store/sources.js'
import { BENCH_DATABASE_URL } from './database-url.js'

const ADMIN_URL = BENCH_DATABASE_URL
const ROOT = path.resolve(import.meta.dirname, '..')

async function withDatabase(run: (url: string) => Promise<void>) {
  const name = `jackdaw_hostile_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  try {
    await run(url.toString())
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}

async function keyLookups(db: pg.Client): Promise<number> {
  // the statistics collector reports a little after the fact
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  const res = await db.query(
    "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'api_keys'",
  )
  return Number(res.rows[0].n)
}

async function unknownKeys(url: string) {
  const service = spawn(process.execPath, ['dist/cli.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: '18170',
      LOG_LEVEL: 'warn',
      JACKDAW_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((resolve, reject) => {
    let out = ''
    service.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('test secret key')) resolve()
    })
    service.on('exit', (code) => reject(new Error(`the service exited ${code}`)))
  })
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  try {
    const before = await keyLookups(db)
    const result = await autocannon({
      url: 'http://127.0.0.1:18170/v2/me',
      connections: 10,
      duration: 10,
      requests: [
        { setupRequest: (req) => ({ ...req, headers: { authorization: `Bearer ${newApiKey('secret', false)}` } }) },
      ],
    })
    const lookups = (await keyLookups(db)) - before
    const statuses = Object.entries(result.statusCodeStats as Record<string, { count: number }>)
      .map(([status, { count }]) => `${status}: ${count}`)
      .join(', ')
    console.log(`unknown keys: ${result.requests.average} req/s; answers ${statuses}; keys looked up: ${lookups}`)
  } finally {
    await db.end()
    service.kill('SIGTERM')
  }
}

async function erasure(url: string) {
  const sources = Number(process.env.BENCH_SOURCES ?? 300_000)
  const store = await openPostgres({ url, poolSize: 4 })
  await migrate(store)
  const first = Date.now() - 10 * 86_400_000
  await store.query(
    `INSERT INTO sources (id, account_id, livemode, type, card, card_number_enc, card_cvc_enc, metadata)
     SELECT 'src_' || lpad(to_hex($1::bigint + g), 12, '0') || lpad(to_hex(g), 20, '0'), 'acct_bench', false, 'card',
            '{}'::jsonb, 'sealed', CASE WHEN g % 3 = 0 THEN 'sealed' END, '{}'::jsonb
     FROM generate_series(1, $2::int) g`,
    [first, sources],
  )
  await store.query('ANALYZE sources')
  const before = idsBefore('source', Date.now() - 86_400_000)
  const times: number[] = []
  let erased = 0
  const started = performance.now()
  for (;;) {
    const t = performance.now()
    const pass = await eraseOldCardData(store, before, 500)
    times.push(performance.now() - t)
    erased += pass.erased
    if (pass.seen < 500) break
  }
  const total = performance.now() - started
  times.sort((a, b) => a - b)
  console.log(
    `erasure: ${sources} sources, ${times.length} statements, ${erased} codes erased in ${Math.round(total)} ms; ` +
      `median statement ${(times[times.length >> 1] ?? 0).toFixed(1)} ms, slowest ${(times.at(-1) ?? 0).toFixed(1)} ms`,
  )
  await store.close()
}

await withDatabase(unknownKeys)
await withDatabase(erasure)
