// Service CPU per operation, sequential, in process (inject), against PostgreSQL.
import { randomBytes } from 'node:crypto'
import { createApp } from '../src/app.js'
import { Vault } from '../src/crypto/vault.js'
import { openPostgres } from '../src/store/db.js'
import { migrate } from '../src/store/migrate.js'
import pg from 'pg'

const N = Number(process.env.N ?? 2000)
const op = process.env.OP ?? 'charge'
const admin = new pg.Client({ connectionString: 'postgres://postgres@localhost/postgres?host=/var/run/postgresql' })
await admin.connect()
const dbName = `cpu_${Date.now()}`
await admin.query(`CREATE DATABASE ${dbName}`)
const db = await openPostgres({ url: `postgres://postgres@localhost/${dbName}?host=/var/run/postgresql`, poolSize: 4 })
await migrate(db)
const app = await createApp({ db, vault: new Vault(randomBytes(32)), logger: false })
await app.ready()
const account = await app.services.accounts.create('cpu')
const headers = { authorization: `Bearer ${account.sk_test_key}` }
const card = { type: 'card', card: { name: 'Ann Lee', number: '4242424242424242', exp_month: '12', exp_year: '2031', cvc: '123' } }
async function call(method: 'GET' | 'POST', url: string, body?: object) {
  const res = await app.inject({ method, url, headers, ...(body ? { payload: body } : {}) })
  if (res.statusCode >= 300) throw new Error(`${res.statusCode} ${res.body}`)
  return res
}
const sources: string[] = []
const need = op === 'charge' ? N + 200 : 200
for (let i = 0; i < need; i++) sources.push((await call('POST', '/v2/sources/', card)).json().id)
for (let i = 0; i < 40; i++) await call('POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: sources.pop() })
const one = async () => {
  if (op === 'charge') await call('POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: sources.pop() })
  else if (op === 'list') await call('GET', '/v2/charges/?limit=20')
  else if (op === 'source') await call('POST', '/v2/sources/', card)
}
for (let i = 0; i < 150; i++) await one() // warm
const runs: number[] = []
for (let r = 0; r < 3; r++) {
  const n = Math.floor(N / 3)
  const c0 = process.cpuUsage()
  for (let i = 0; i < n; i++) await one()
  const c = process.cpuUsage(c0)
  runs.push((c.user + c.system) / n)
}
console.log(op, 'service CPU µs/op (user+sys):', runs.map((x) => x.toFixed(0)).join(' '))
await app.close(); await db.close()
await admin.query(`DROP DATABASE ${dbName}`); await admin.end()
