import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { type Db, openPglite, openPostgres } from '../../src/store/db.js'
import { migrate } from '../../src/store/migrate.js'

/** Set by .ci/run for the second pass: the suite then runs on real PostgreSQL. */
export const POSTGRES_URL = process.env.TEST_DATABASE_URL

export const onPostgres = POSTGRES_URL !== undefined && POSTGRES_URL !== ''

export interface TestStore {
  /** opens one more connection pool to the same database, as a second process would */
  connect(): Promise<Db>
  db: Db
  close(): Promise<void>
}

/**
 * A fresh store for one test file, migrated up to `upTo` (all by default): an in-memory embedded
 * store, or, on PostgreSQL, a schema of its own in the shared test database, dropped at the end.
 */
export async function testStore(upTo?: number): Promise<TestStore> {
  if (!onPostgres) {
    const db = await openPglite()
    await migrate(db, upTo)
    return {
      db,
      connect: async () => {
        throw new Error('the embedded store has one connection; this test needs PostgreSQL')
      },
      close: () => db.close(),
    }
  }
  const url = POSTGRES_URL as string
  const schema = `t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.end()
  const pools: Db[] = []
  const connect = async () => {
    const db = await openPostgres({ url, schema, poolSize: 20 })
    pools.push(db)
    return db
  }
  const db = await connect()
  await migrate(db, upTo)
  return {
    db,
    connect,
    async close() {
      for (const p of pools) await p.close()
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query(`DROP SCHEMA ${schema} CASCADE`)
      await c.end()
    },
  }
}
