import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, SchemaMismatchError } from '../../src/store/migrate.js'
import { type TestStore, testStore } from '../helpers/store.js'

/** The schema: one baseline that applies to an empty database, once, with its integrity rules. */
let store: TestStore
beforeAll(async () => {
  store = await testStore()
})
afterAll(() => store.close())

const violation = async (sql: string, params: unknown[] = []) => {
  try {
    await store.db.query(sql, params)
    return undefined
  } catch (err) {
    return (err as { code?: string }).code
  }
}

describe('the migrations', () => {
  it('apply to an empty database, and a restart applies nothing again', async () => {
    const applied = await store.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version')
    expect(applied.rows.map((r) => r.name)).toEqual(['001_baseline.sql'])
    expect(await migrate(store.db)).toEqual([])
    expect(await migrate(store.db)).toEqual([])
  })

  it('refuse a database migrated by another version, whose schema they cannot bring up to date', async () => {
    const other = await testStore()
    try {
      // a migration this version does not have
      await other.db.query("INSERT INTO schema_migrations (version, name, digest) VALUES (7, '007_later.sql', 'f00d')")
      await expect(migrate(other.db)).rejects.toThrow(/its migration 007_later\.sql is not this version's/)
      await other.db.query('DELETE FROM schema_migrations WHERE version = 7')
      expect(await migrate(other.db)).toEqual([])
      // another text under the baseline's name
      await other.db.query("UPDATE schema_migrations SET digest = 'f00d' WHERE version = 1")
      await expect(migrate(other.db)).rejects.toThrow(SchemaMismatchError)
      // a table of migrations kept before they were recorded with their digest
      await other.db.exec('ALTER TABLE schema_migrations DROP COLUMN digest')
      await expect(migrate(other.db)).rejects.toThrow(/001_baseline\.sql is not this version's/)
    } finally {
      await other.close()
    }
  })

  it('refuse a row that points at nothing: every reference is a foreign key', async () => {
    await store.db.query(
      `INSERT INTO accounts (id, name, public_key_test, public_key_live, webhook_secret_test_enc, webhook_secret_live_enc)
       VALUES ('acct_1', 'A', 'pk1', 'pk2', 'x', 'y')`,
    )
    const FOREIGN_KEY = '23503'
    expect(
      await violation(
        "INSERT INTO sources (id, account_id, livemode, type) VALUES ('src_1', 'acct_none', false, 'card')",
      ),
    ).toBe(FOREIGN_KEY)
    expect(
      await violation("INSERT INTO sources (id, account_id, livemode, type) VALUES ('src_1', 'acct_1', false, 'card')"),
    ).toBeUndefined()
    const charge = (id: string, account: string, source: string, customer: string | null) =>
      violation(
        `INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
           description, statement_descriptor, status, capture, require_auth)
         VALUES ($1, $2, false, $3, $4, 100, 100, 'usd', '', 'X', 'pending', true, true)`,
        [id, account, source, customer],
      )
    expect(await charge('ch_1', 'acct_none', 'src_1', null)).toBe(FOREIGN_KEY)
    expect(await charge('ch_1', 'acct_1', 'src_none', null)).toBe(FOREIGN_KEY)
    expect(await charge('ch_1', 'acct_1', 'src_1', 'cus_none')).toBe(FOREIGN_KEY)
    expect(await charge('ch_1', 'acct_1', 'src_1', null)).toBeUndefined()
    expect(
      await violation(
        "INSERT INTO events (id, account_id, livemode, type, charge_id, data) VALUES ('evt_1', 'acct_1', false, 't', 'ch_none', '{}')",
      ),
    ).toBe(FOREIGN_KEY)
    expect(
      await violation(
        "INSERT INTO customers (id, account_id, livemode, email) VALUES ('cus_1', 'acct_none', false, 'a@example.com')",
      ),
    ).toBe(FOREIGN_KEY)
    expect(
      await violation(
        "INSERT INTO idempotency_keys (account_id, livemode, key, request_hash) VALUES ('acct_none', false, 'k', 'h')",
      ),
    ).toBe(FOREIGN_KEY)
  })

  it('keep their checks of closed sets and amounts', async () => {
    const CHECK = '23514'
    // a closed set is checked by a cast to its enum type, which refuses a value outside it
    const NOT_IN_SET = '22P02'
    expect(await violation("UPDATE charges SET status = 'lost' WHERE id = 'ch_1'")).toBe(NOT_IN_SET)
    expect(await violation("UPDATE charges SET amount_refunded = 101 WHERE id = 'ch_1'")).toBe(CHECK)
    expect(await violation("UPDATE sources SET type = 'cheque' WHERE id = 'src_1'")).toBe(NOT_IN_SET)
  })
})
