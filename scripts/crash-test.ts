/**
 * Crash safety, on PostgreSQL: while clients create sources and charges, capture and refund (each
 * request with an Idempotency-Key, retried until it gets an answer), the service is killed with
 * SIGKILL several times and started again. Afterwards the store must hold every object a client
 * was told about exactly once, no source may back two charges, a repeat of every request must get
 * the answer it got before, every charge's refunds must add up, and every notify call must have
 * been delivered. `npm run crash-test`; CRASH_DATABASE_URL names the server (default local).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import path from 'node:path'
import pg from 'pg'

const ADMIN_URL = process.env.CRASH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const KILLS = Number(process.env.CRASH_KILLS ?? 5)
const CLIENTS = Number(process.env.CRASH_CLIENTS ?? 8)
const PORT = Number(process.env.CRASH_PORT ?? (await freePort()))
const ROOT = path.resolve(import.meta.dirname, '..')
const BASE = `http://127.0.0.1:${PORT}`

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
  const port = (probe.address() as { port: number }).port
  await new Promise((r) => probe.close(r))
  return port
}

const log = (msg: string) => process.stdout.write(`crash-test: ${msg}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// --- a fresh database and a notify receiver -------------------------------------------------
const dbName = `jackdaw_crash_${randomBytes(4).toString('hex')}`
const admin = new pg.Client({ connectionString: ADMIN_URL })
await admin.connect()
await admin.query(`CREATE DATABASE ${dbName}`)
await admin.end()
const dbUrl = new URL(ADMIN_URL)
dbUrl.pathname = `/${dbName}`

const received = new Map<string, number>()
const receiver = createServer((req, res) => {
  let body = ''
  req.on('data', (d) => {
    body += d
  })
  req.on('end', () => {
    try {
      const id = JSON.parse(body).id as string
      received.set(id, (received.get(id) ?? 0) + 1)
    } catch {}
    res.writeHead(200).end('ok')
  })
})
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
const notifyUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`

// --- the service, killed and started again ---------------------------------------------------
const env = {
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  JACKDAW_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  PORT: String(PORT),
  LOG_LEVEL: 'error',
  JACKDAW_NOTIFY_SCHEDULE: '0.2,0.5,1,1,2',
  // the receiver is on this machine: a local receiver must be allowed
  JACKDAW_NOTIFY_ALLOW_HOSTS: '127.0.0.1',
  JACKDAW_IDEMPOTENCY_LEASE_SECONDS: '3',
  // a call claimed by a process that was killed is taken over after this long, which must outlast
  // a call's timeout (the receiver here answers at once)
  JACKDAW_NOTIFY_TIMEOUT_MS: '2000',
  JACKDAW_NOTIFY_LEASE_MS: '3000',
  JACKDAW_RECOVERY_GRACE_MS: '1500',
  JACKDAW_RECOVERY_INTERVAL_MS: '500',
  JACKDAW_RATE_LIMIT: '1000000',
}
let service: ChildProcess | undefined
let key = ''

// the service must not outlive this script, however it ends
process.on('exit', () => service?.kill('SIGKILL'))

async function startService(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  service = child
  let out = ''
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString()
      const k = out.match(/test secret key: (\S+)/)?.[1]
      if (k) key = k
      if (/listening on/.test(out)) resolve()
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.on('exit', (code) => reject(new Error(`service exited ${code}: ${out}`)))
  })
}

// --- clients ---------------------------------------------------------------------------------
interface Answer {
  status: number
  body: string
}
interface Sent {
  method: string
  path: string
  body: unknown
  key: string
  answer: Answer
}
const sent: Sent[] = []
let stopLoad = false

/** One request with its key, sent again until the service gives a definitive answer. */
async function call(method: string, p: string, body: unknown): Promise<Answer> {
  const idem = randomUUID()
  for (let attempt = 0; attempt < 400; attempt++) {
    try {
      const res = await fetch(`${BASE}${p}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      })
      const text = await res.text()
      // a fault, a restart in progress, or the key still held by a request that died with its process
      if (res.status >= 500 || res.status === 409) {
        await sleep(100)
        continue
      }
      const answer = { status: res.status, body: text }
      sent.push({ method, path: p, body, key: idem, answer })
      return answer
    } catch {
      await sleep(100)
    }
  }
  throw new Error(`no answer for ${method} ${p}`)
}

const CARD = { name: 'Crash Test', number: '4242424242424242', exp_month: '12', exp_year: '2035', cvc: '123' }

async function client() {
  while (!stopLoad) {
    const src = await call('POST', '/v2/sources/', {
      type: 'card',
      card: CARD,
      redirect: { success: 'https://shop.example/ok', fail: 'https://shop.example/no', notify: notifyUrl },
    })
    if (src.status !== 200) continue
    const sourceId = JSON.parse(src.body).id
    const ch = await call('POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: sourceId, capture: false })
    if (ch.status !== 201) continue
    const chargeId = JSON.parse(ch.body).id
    await call('POST', `/v2/charges/${chargeId}/capture`, { amount: 900 })
    await call('POST', `/v2/charges/${chargeId}/refund`, { amount: 300 })
    await call('POST', `/v2/charges/${chargeId}/refund`, { amount: 300 })
    // a second charge on the same source must be refused, before and after any crash
    await call('POST', '/v2/charges/', { amount: 500, currency: 'usd', source: sourceId })
  }
}

await startService()
log(`service up on ${BASE}, database ${dbName}`)
const clients = Array.from({ length: CLIENTS }, () => client())
for (let i = 0; i < KILLS; i++) {
  await sleep(1500 + Math.random() * 1500)
  service?.kill('SIGKILL')
  await new Promise((r) => service?.once('exit', r))
  log(`killed the service (${i + 1}/${KILLS}) after ${sent.length} answers`)
  await sleep(200)
  await startService()
}
await sleep(2000)
stopLoad = true
await Promise.all(clients)
log(`load done: ${sent.length} answered requests`)

// --- checks ----------------------------------------------------------------------------------
const failures: string[] = []
const db = new pg.Client({ connectionString: dbUrl.toString() })
await db.connect()

// 1. every request repeated with its key gets the answer it got before
let replayed = 0
for (const s of sent) {
  const res = await fetch(`${BASE}${s.path}`, {
    method: s.method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': s.key },
    body: JSON.stringify(s.body),
  })
  const text = await res.text()
  if (res.status !== s.answer.status || text !== s.answer.body) {
    failures.push(`replay of ${s.method} ${s.path} answered ${res.status}, first ${s.answer.status}`)
  }
  replayed++
}
log(`replayed ${replayed} requests`)

// 2. every object a client was told about is in the store exactly once
const okIds = sent.filter((s) => s.answer.status < 300).map((s) => JSON.parse(s.answer.body).id as string)
for (const table of ['sources', 'charges'] as const) {
  const prefix = table === 'sources' ? 'src_' : 'ch_'
  const ids = [...new Set(okIds.filter((id) => id.startsWith(prefix)))]
  const found = await db.query(`SELECT id FROM ${table} WHERE id = ANY($1::text[])`, [ids])
  if (found.rows.length !== ids.length)
    failures.push(`${table}: ${ids.length - found.rows.length} answered objects missing`)
  log(`${table}: ${ids.length} answered with 2xx, all present: ${found.rows.length === ids.length}`)
}

// 3. no source backs two charges
const doubled = await db.query('SELECT source_id, count(*) FROM charges GROUP BY source_id HAVING count(*) > 1')
if (doubled.rows.length > 0) failures.push(`${doubled.rows.length} sources charged twice`)

// 4. refunds add up, and nothing is left mid-operation once recovery has run
for (let i = 0; i < 60; i++) {
  const stuck = await db.query(
    "SELECT count(*)::int AS n FROM charges WHERE processing IS NOT NULL OR id IN (SELECT charge_id FROM refunds WHERE status = 'pending')",
  )
  if (stuck.rows[0].n === 0) break
  await sleep(500)
}
const stuck = await db.query('SELECT count(*)::int AS n FROM charges WHERE processing IS NOT NULL')
if (stuck.rows[0].n > 0) failures.push(`${stuck.rows[0].n} charges left mid-operation`)
const sums = await db.query(`
  SELECT c.id, c.amount_refunded, COALESCE(sum(r.amount) FILTER (WHERE r.status <> 'failed'), 0)::bigint AS refunds
  FROM charges c LEFT JOIN refunds r ON r.charge_id = c.id GROUP BY c.id, c.amount_refunded`)
const off = sums.rows.filter((r) => Number(r.amount_refunded) !== Number(r.refunds))
if (off.length > 0) failures.push(`${off.length} charges whose amount_refunded is not the sum of their refunds`)
// and the status says the same as the amounts: refunded exactly when nothing is left
const mislabelled = await db.query(`
  SELECT count(*)::int AS n FROM charges
  WHERE status IN ('succeeded', 'refunded') AND (status = 'refunded') <> (amount_refunded >= amount)`)
if (mislabelled.rows[0].n > 0)
  failures.push(`${mislabelled.rows[0].n} charges whose status disagrees with amount_refunded`)
log(`${sums.rows.length} charges checked: refunds add up on ${sums.rows.length - off.length}`)

// 5. every queued notify call is delivered
let undelivered = -1
for (let i = 0; i < 120; i++) {
  const q = await db.query("SELECT count(*)::int AS n FROM deliveries WHERE status <> 'delivered'")
  undelivered = q.rows[0].n
  if (undelivered === 0) break
  await sleep(500)
}
const events = await db.query('SELECT event_id FROM deliveries')
const missing = events.rows.filter((r) => !received.has(r.event_id)).length
if (undelivered !== 0) {
  const left = await db.query(
    "SELECT status, attempt_count, next_attempt_at FROM deliveries WHERE status <> 'delivered'",
  )
  failures.push(`${undelivered} notify deliveries not delivered: ${JSON.stringify(left.rows)}`)
}
if (missing > 0) failures.push(`${missing} events never reached the receiver`)
log(`${events.rows.length} notify deliveries queued; undelivered ${undelivered}; missing at receiver ${missing}`)

await db.end()
service?.kill('SIGTERM')
receiver.close()
const drop = new pg.Client({ connectionString: ADMIN_URL })
await drop.connect()
await drop.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
await drop.end()

if (failures.length > 0) {
  for (const f of failures) log(`FAILED: ${f}`)
  log(`checks: ${5 - new Set(failures.map((f) => f.split(':')[0])).size} passed, ${failures.length} failed`)
  process.exit(1)
}
log(`checks: 5 passed, 0 failed (${KILLS} kills, ${sent.length} answered requests)`)
process.exit(0)
