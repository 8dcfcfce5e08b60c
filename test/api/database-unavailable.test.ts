import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import { openPostgres } from '../../src/store/db.js'
import { buildApp, type Client, cardSource, client, type Reply, type TestApp, testApp } from '../helpers/app.js'
import { type TestStore, testStore } from '../helpers/store.js'

// A database that cannot serve for now (a full disk, a server gone) is a 503 `service_unavailable`
// with Retry-After, which clients retry, never a 500; the request's Idempotency-Key is released, so
// the same request succeeds once the database is back.

function expectUnavailable(res: Reply) {
  expect(res.status, res.text).toBe(503)
  expect(res.body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' })
  expect(res.headers['retry-after']).toBe('1')
}

// PostgreSQL's own errors, raised where an insert of a customer would write
const REFUSALS = [
  {
    what: 'a full disk',
    code: 'disk_full',
    text: 'could not extend file "base/1/2": No space left on device',
    logged: 'database unavailable',
  },
  { what: 'a deadlock', code: 'deadlock_detected', text: 'deadlock detected', logged: 'transaction conflict' },
  {
    what: 'a database closed to connections',
    code: 'object_not_in_prerequisite_state',
    text: 'database "jackdaw" is not currently accepting connections',
    logged: 'database unavailable',
  },
]

describe.each(REFUSALS)('$what', ({ what, code, text, logged }) => {
  let t: TestApp
  beforeAll(async () => {
    t = await testApp()
  })
  afterAll(() => t.close())

  it('answers 503 without the database’s words, and the same request succeeds once it can', async () => {
    await t.db.exec(`
      CREATE FUNCTION refused() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION '${text}' USING ERRCODE = '${code}'; END $$;
      CREATE TRIGGER refused BEFORE INSERT ON customers FOR EACH ROW EXECUTE FUNCTION refused();`)
    const body = { email: 'room@example.com', description: what }
    const key = { 'idempotency-key': `${code}-1` }
    const answer = await t.sk.post('/v2/customers/', body, key)
    expectUnavailable(answer)
    expect(answer.text).not.toMatch(/extend|No space|base\/|deadlock|accepting/)
    expect(t.logs.join('')).toContain(logged)
    // reading still works
    expect((await t.sk.get('/v2/customers/')).status).toBe(200)

    await t.db.exec('DROP TRIGGER refused ON customers')
    const made = await t.sk.post('/v2/customers/', body, key)
    expect(made.status, made.text).toBe(201)
    const again = await t.sk.post('/v2/customers/', body, key)
    expect(again.body.id).toBe(made.body.id)
    const listed = (await t.sk.get('/v2/customers/')).body.data
    expect(listed.map((c: { id: string }) => c.id)).toEqual([made.body.id])
  })
})

/** A TCP relay to the test database that can be cut and put back, as a network or a server would go. */
async function relayTo(databaseUrl: string) {
  const target = new URL(databaseUrl)
  const socketDir = target.searchParams.get('host')
  const port = Number(target.port || 5432)
  const upstream = () =>
    socketDir ? net.connect({ path: `${socketDir}/.s.PGSQL.${port}` }) : net.connect({ host: target.hostname, port })
  const sockets = new Set<net.Socket>()
  let server: net.Server | undefined
  const listen = (at: number) =>
    new Promise<number>((resolve) => {
      const listening = net.createServer((down) => {
        const up = upstream()
        for (const s of [down, up]) {
          sockets.add(s)
          s.on('error', () => {})
          s.on('close', () => {
            sockets.delete(s)
            down.destroy()
            up.destroy()
          })
        }
        down.pipe(up).pipe(down)
      })
      server = listening
      listening.listen(at, '127.0.0.1', () => resolve((listening.address() as net.AddressInfo).port))
    })
  const relayPort = await listen(0)
  const url = new URL(databaseUrl)
  url.searchParams.delete('host')
  url.hostname = '127.0.0.1'
  url.port = String(relayPort)
  return {
    url: url.toString(),
    /** the server stops answering, connections open: what a frozen server or a lost network leaves */
    freeze() {
      for (const s of sockets) s.unpipe().pause()
      server?.removeAllListeners('connection')
      server?.on('connection', (down: net.Socket) => {
        sockets.add(down)
        down.on('error', () => {})
        down.pause()
      })
    },
    async cut() {
      const closed = new Promise((r) => server?.close(r))
      for (const s of sockets) s.destroy()
      await closed
    },
    restore: () => listen(relayPort),
  }
}

describe('a database that goes away and comes back', () => {
  let store: TestStore
  let app: App
  let logs: string[]
  let sk: Client
  let relay: Awaited<ReturnType<typeof relayTo>>
  beforeAll(async () => {
    store = await testStore()
    relay = await relayTo(store.url)
    const db = await openPostgres({ url: relay.url, poolSize: 4 })
    // a key's claim lasts three seconds, then a retry of the same request may take it again
    ;({ app, logs } = await buildApp(db, new Vault(randomBytes(32)), {}, { idempotencyLeaseSeconds: 3 }))
    sk = client(app, (await app.services.accounts.create('Relayed shop')).sk_test_key)
  })
  afterAll(async () => {
    await app?.close()
    await store?.close()
  })

  it('answers 503 while it is gone, then serves the same requests as if nothing happened', async () => {
    const body = { email: 'back@example.com', description: 'Relayed' }
    const key = { 'idempotency-key': 'relayed-1' }
    expect((await sk.get('/v2/customers/')).status).toBe(200)

    await relay.cut()
    expectUnavailable(await sk.get('/v2/customers/'))
    expectUnavailable(await sk.post('/v2/customers/', body, key))

    await relay.restore()
    const made = await sk.post('/v2/customers/', body, key)
    expect(made.status, made.text).toBe(201)
    const listed = (await sk.get('/v2/customers/')).body.data
    expect(listed.map((c: { id: string }) => c.id)).toEqual([made.body.id])
  })

  it('answers 503 to a charge it went away under, and the same request later finishes that charge', async () => {
    const source = (await sk.post('/v2/sources/', cardSource())).body
    const body = { amount: 1500, currency: 'usd', source: source.id }
    const key = { 'idempotency-key': 'relayed-charge-1' }
    // recorded, then the processor takes a second, and the database goes while it does
    const first = sk.post('/v2/charges/', body, { ...key, 'jackdaw-test-fault': 'processor_latency=1000' })
    await new Promise((r) => setTimeout(r, 400))
    await relay.cut()
    const refused = await first
    expectUnavailable(refused)
    expect(refused.text).not.toMatch(/127\.0\.0\.1|ECONN|statusCode/)
    // the key could not be released while the database was gone
    expect(logs.join('')).toContain('idempotency record not updated')

    await relay.restore()
    const early = await sk.post('/v2/charges/', body, key)
    expect(early.status, early.text).toBe(409)
    expect(early.body.error.code).toBe('idempotency_key_in_use')

    // once the claim's lease has run out
    await new Promise((r) => setTimeout(r, 2500))
    const finished = await sk.post('/v2/charges/', body, key)
    expect(finished.status, finished.text).toBe(201)
    expect(finished.body).toMatchObject({ status: 'succeeded', amount: 1500, source: { id: source.id } })
    const charges = (await sk.get('/v2/charges/')).body.data
    expect(charges.map((c: { id: string }) => c.id)).toEqual([finished.body.id])
  })
})

describe('a database that stops answering, its connections left open', () => {
  it('answers 503 once a statement or a connection has waited its time, instead of holding the request', async () => {
    const store = await testStore()
    const relay = await relayTo(store.url)
    const db = await openPostgres({ url: relay.url, poolSize: 2, connectTimeoutMs: 1_000, queryTimeoutMs: 1_500 })
    const { app } = await buildApp(db, new Vault(randomBytes(32)), {}, {})
    try {
      const sk = client(app, (await app.services.accounts.create('Frozen shop')).sk_test_key)
      expect((await sk.get('/v2/customers/')).status).toBe(200)
      relay.freeze()
      const started = Date.now()
      // a statement on a connection open already, then new connections that never open
      const answers = [
        await sk.post('/v2/customers/', { email: 'f@example.com', description: 'x' }),
        await sk.post('/v2/customers/', { email: 'g@example.com', description: 'x' }),
        await sk.post('/v2/customers/', { email: 'h@example.com', description: 'x' }),
      ]
      for (const answer of answers) expectUnavailable(answer)
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      await app.close().catch(() => {})
      await relay.cut()
      await store.close()
    }
  }, 30_000)
})
