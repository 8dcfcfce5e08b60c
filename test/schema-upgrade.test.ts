import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import { Vault } from '../src/crypto/vault.js'
import { openPostgres, type Queryable } from '../src/store/db.js'
import { loadMigrations, migrate } from '../src/store/migrate.js'
import { buildApp, type Client, cardSource, client, type Json, REDIRECT } from './helpers/app.js'
import { SPEC_SOURCE_TYPES } from './helpers/spec.js'
import { type TestStore, testServerUrl, testStore } from './helpers/store.js'

/**
 * A store made before migration 006 (foreign keys from every table to accounts) upgraded in place,
 * with the service running on it: every object reads back as before, statements the service has
 * prepared still answer (those whose answer changed type, 011 and 015, prepared again), and the
 * constraints left still hold.
 */
describe('upgrading a store with payments in it', () => {
  let store: TestStore
  let app: App
  let sk: Client
  const before: Json[] = []
  const events: Json[] = []

  beforeAll(async () => {
    store = await testStore(5)
    const vault = new Vault(randomBytes(32))
    app = (await buildApp(store.db, vault)).app
    sk = client(app, (await app.services.accounts.create('Upgrade')).sk_test_key)
    const pay = async (source: Json, amount = 1000, extra: Json = {}) => {
      const src = await sk.post('/v2/sources/', source)
      expect(src.status).toBe(200)
      return (await sk.post('/v2/charges/', { amount, currency: 'usd', source: src.body.id, ...extra })).body
    }
    const succeeded = await pay(
      { ...cardSource(), owner: { name: 'Ann Lee', billing: { name: 'Ann Lee', line1: '1 Main St', country: 'PH' } } },
      1000,
      {
        metadata: { order: '1234', note: 'gift' },
      },
    )
    const refunded = await pay(cardSource(), 700)
    expect((await sk.post(`/v2/charges/${refunded.id}/refund`, {})).status).toBe(200)
    const failed = await pay(cardSource({ number: '4000000000000002' }))
    const pending = await pay({ type: 'qr_a', redirect: REDIRECT })
    const unused = await sk.post('/v2/sources/', { type: 'wallet_e', redirect: REDIRECT })
    expect(unused.status).toBe(200)
    for (const c of [succeeded, refunded, failed, pending]) before.push((await sk.get(`/v2/charges/${c.id}`)).body)
    before.push((await sk.get(`/v2/sources/${unused.body.id}`)).body)
    const customer = await sk.post('/v2/customers/', {
      email: 'kept@example.com',
      description: 'Kept',
      metadata: { tier: 'gold', since: '2020' },
    })
    expect(customer.status).toBe(201)
    const saved = await sk.post('/v2/sources/', cardSource())
    expect((await sk.post(`/v2/customers/${customer.body.id}/sources`, { source: saved.body.id })).status).toBe(200)
    before.push((await sk.get(`/v2/customers/${customer.body.id}`)).body)
    expect(before[5]?.sources).toHaveLength(1)
    expect(before.slice(0, 4).map((c) => c.status)).toEqual(['succeeded', 'refunded', 'failed', 'pending'])
    // the events are read, and that statement prepared, before the upgrade changes their column
    events.push(...(await sk.get('/v2/events/?limit=20')).body.data)
    expect(events.length).toBeGreaterThan(0)
    expect(await migrate(store.db)).toEqual(
      loadMigrations()
        .filter((m) => m.version > 5)
        .map((m) => m.name),
    )
  })

  afterAll(async () => {
    await app.close()
    await store.close()
  })

  it('reads every charge, source and customer back as it was before the upgrade, though their objects changed type (015)', async () => {
    const paths: Record<string, string> = { charge: '/v2/charges/', source: '/v2/sources/', customer: '/v2/customers/' }
    for (const obj of before) expect((await sk.get(`${paths[obj.object]}${obj.id}`)).body).toEqual(obj)
    expect(before.map((o) => o.object)).toEqual(['charge', 'charge', 'charge', 'charge', 'source', 'customer'])
    expect(before[0]?.metadata).toEqual({ order: '1234', note: 'gift' })
    const listed = (await sk.get('/v2/charges/?limit=10')).body.data
    expect(listed.map((c: Json) => c.id).sort()).toEqual(
      before
        .slice(0, 4)
        .map((c) => c.id)
        .sort(),
    )
  })

  it('reads every event back as it was before the upgrade, though its column changed type (011)', async () => {
    expect((await sk.get('/v2/events/?limit=20')).body.data).toEqual(events)
  })

  it('goes on taking payments on the upgraded store', async () => {
    const src = await sk.post('/v2/sources/', cardSource())
    const ch = await sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id, capture: false })
    expect([ch.body.status, ch.body.captured]).toEqual(['succeeded', false])
    const captured = await sk.post(`/v2/charges/${ch.body.id}/capture`, {})
    expect([captured.status, captured.body.captured]).toEqual([200, true])
    const listed = (await sk.get('/v2/events/?limit=20')).body.data as Json[]
    expect(listed.slice(0, 2).map((e) => [e.type, e.data.object.id])).toEqual([
      ['charge.captured', ch.body.id],
      ['charge.succeeded', ch.body.id],
    ])
    expect(listed[0]?.data.object).toEqual(captured.body)
  })

  it('still refuses a source type, a charge or refund status outside the closed set, more refunded than charged, or a refund without its charge', async () => {
    const source = before[4] as Json
    await expect(store.db.query('UPDATE sources SET type = $2 WHERE id = $1', [source.id, 'wallet_z'])).rejects.toThrow(
      /enum source_type: "wallet_z"/,
    )
    await expect(
      store.db.query('UPDATE charges SET status = $2 WHERE id = $1', [before[0]?.id, 'settled']),
    ).rejects.toThrow(/enum charge_status: "settled"/)
    const refund = await store.db.query<{ id: string }>('SELECT id FROM refunds LIMIT 1')
    expect(refund.rows).toHaveLength(1)
    await expect(
      store.db.query('UPDATE refunds SET status = $2 WHERE id = $1', [refund.rows[0]?.id, 'reversed']),
    ).rejects.toThrow(/enum refund_status: "reversed"/)
    await expect(
      store.db.query('UPDATE charges SET amount_refunded = amount + 1 WHERE id = $1', [before[0]?.id]),
    ).rejects.toThrow(/charges_check/)
    await expect(
      store.db.query('UPDATE refunds SET charge_id = $2 WHERE id = $1', [refund.rows[0]?.id, 'ch_missing']),
    ).rejects.toThrow(/foreign key/)
    expect((await sk.get(`/v2/sources/${source.id}`)).body).toEqual(source)
    expect((await sk.get(`/v2/charges/${before[0]?.id}`)).body).toEqual(before[0])
  })

  it("the store's closed sets are the interface's: every source type in its order, every status", async () => {
    const labels = async (type: string) =>
      (await store.db.query<{ label: string }>(`SELECT unnest(enum_range(NULL::${type}))::text AS label`)).rows.map(
        (r) => r.label,
      )
    expect(await labels('source_type')).toEqual(SPEC_SOURCE_TYPES)
    expect(await labels('charge_status')).toEqual(['pending', 'succeeded', 'failed', 'voided', 'refunded'])
    expect(await labels('refund_status')).toEqual(['pending', 'succeeded', 'failed'])
  })
})

/**
 * A migration that changes the type of a column a prepared statement answers (011) makes
 * PostgreSQL refuse the statement on every connection that prepared it. The store prepares it
 * again: a lone statement is run again, a transaction again whole. One connection, so that the
 * statements run where they were prepared.
 */
describe('statements prepared before their answer changed type', () => {
  it('run again, alone and in a transaction, and a transaction writes once', async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`
    const db = await openPostgres({ url: testServerUrl(), poolSize: 1 })
    await db.exec(`CREATE SCHEMA ${schema}`)
    await db.exec(`CREATE TABLE ${schema}.notes (id text PRIMARY KEY, body jsonb NOT NULL)`)
    const insert = (tx: Queryable, id: string) =>
      tx.query<{ body: Json }>(`INSERT INTO ${schema}.notes (id, body) VALUES ($1, $2::jsonb) RETURNING body`, [
        id,
        '{"b": 1, "a": 2}',
      ])
    const read = (id: string) => db.query<{ body: Json }>(`SELECT body FROM ${schema}.notes WHERE id = $1`, [id])
    try {
      await db.transaction((tx) => insert(tx, 'n1'))
      expect((await read('n1')).rows[0]?.body).toEqual({ a: 2, b: 1 })
      await db.exec(`ALTER TABLE ${schema}.notes ALTER COLUMN body TYPE json USING body::json`)
      expect((await db.transaction((tx) => insert(tx, 'n2'))).rows[0]?.body).toEqual({ a: 2, b: 1 })
      expect((await read('n1')).rows[0]?.body).toEqual({ a: 2, b: 1 })
      const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.notes`)
      expect(count.rows[0]?.n).toBe(2)
    } finally {
      await db.exec(`DROP SCHEMA ${schema} CASCADE`)
      await db.close()
    }
  })
})
