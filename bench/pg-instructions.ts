/**
 * One side of an instruction count of PostgreSQL's work per operation (see pg-instructions.sh):
 * makes sources on one connection, then on fresh ones (fresh backends: the pool's one and those
 * batched statements run on) prepares every statement and makes N operations of one kind, and
 * prints those backends' process ids. Run once with N=0 and once with N>0 against a server under
 * callgrind; the difference of the two sets' counts over N is the database's work per operation.
 */
import { randomBytes } from 'node:crypto'
import { createApp } from '../src/app.js'
import { Vault } from '../src/crypto/vault.js'
import { openPostgres } from '../src/store/db.js'
import { migrate } from '../src/store/migrate.js'

const N = Number(process.env.PGI_N ?? 100)
const op = process.env.PGI_OP ?? 'charge'
const url = process.env.PGI_URL
if (!url) throw new Error('PGI_URL is required')
const vault = new Vault(randomBytes(32))
const card = {
  type: 'card',
  card: { name: 'Ann Lee', number: '4242424242424242', exp_month: '12', exp_year: '2031', cvc: '123' },
}

async function open() {
  const db = await openPostgres({ url: url as string, poolSize: 1 })
  const app = await createApp({ db, vault })
  await app.ready()
  return { db, app }
}

let s = await open()
await migrate(s.db)
const account = await s.app.services.accounts.create('Instruction count')
const headers = { authorization: `Bearer ${account.sk_test_key}` }
async function call(method: 'GET' | 'POST', path: string, body?: object) {
  const res = await s.app.inject({ method, url: path, headers, ...(body ? { payload: body } : {}) })
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`)
  return res.json()
}
// PGI_CONCURRENCY > 1 makes operations that many at a time, so that concurrent writes share
// statements (src/store/batch.ts) as they do under load
const concurrency = Number(process.env.PGI_CONCURRENCY ?? 1)
const WARM_ROUNDS = 3
const sources: string[] = []
for (let i = 0; i < N + 5 + WARM_ROUNDS * concurrency; i++) sources.push((await call('POST', '/v2/sources/', card)).id)
// a full page of 20 to list, as the benchmark lists
if (op === 'list') {
  for (let i = 0; i < 20; i++) {
    const source = (await call('POST', '/v2/sources/', card)).id
    await call('POST', '/v2/charges/', { amount: 1000, currency: 'usd', source })
  }
}
await s.app.close()
await s.db.close()

s = await open()
for (let i = 0; i < 5; i++) await call('POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: sources.pop() })
await call('POST', '/v2/sources/', card)
await call('GET', '/v2/charges/?limit=20')
async function one() {
  if (op === 'source') await call('POST', '/v2/sources/', card)
  else if (op === 'charge') await call('POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: sources.pop() })
  else if (op === 'list') await call('GET', '/v2/charges/?limit=20')
  else throw new Error(`unknown PGI_OP ${op}`)
}
// the warm-up runs at the measured concurrency too, so that both runs open the same connections
// (a batch runs on a connection of its own while another is under way): a backend's start-up
// would otherwise count as the operations' work
for (let i = 0; i < WARM_ROUNDS; i++) await Promise.all(Array.from({ length: concurrency }, one))
const walBefore = (await s.db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn
for (let i = 0; i < N; i += concurrency) {
  await Promise.all(Array.from({ length: Math.min(concurrency, N - i) }, one))
}
// the WAL the operations wrote: the server under count serves nothing else
if (N > 0) {
  const wal = await s.db.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [
    walBefore,
  ])
  console.error(`${op}: ${Math.round(Number(wal.rows[0]?.bytes) / N)} bytes of WAL per operation`)
}
const backends = await s.db.query<{ pids: string }>(
  "SELECT string_agg(pid::text, ' ') AS pids FROM pg_stat_activity WHERE datname = current_database()",
)
await s.app.close()
await s.db.close()
console.log(backends.rows[0]?.pids)
