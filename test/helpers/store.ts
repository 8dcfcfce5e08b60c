import { inject } from 'vitest'
import { type Db, openPostgres } from '../../src/store/db.js'
import { migrate } from '../../src/store/migrate.js'
import { createDatabase, databaseUrl, dropDatabase } from './database.js'

export interface TestStore {
  /** opens one more connection pool to the same database, as a second process would */
  connect(): Promise<Db>
  db: Db
  /** the database's connection string, for a process of its own */
  url: string
  close(): Promise<void>
}

/**
 * The run's PostgreSQL (test/helpers/global-setup.ts): the server TEST_DATABASE_URL names, or the
 * embedded one.
 */
export function testServerUrl(): string {
  return inject('testDatabase').adminUrl
}

/**
 * A fresh database for one test, dropped at its close: a clone of the migrated template, or, with
 * `upTo`, an empty one migrated up to that version.
 */
export async function testStore(upTo?: number): Promise<TestStore> {
  const { adminUrl, template } = inject('testDatabase')
  const name = await createDatabase(adminUrl, upTo === undefined ? template : undefined)
  const url = databaseUrl(adminUrl, name)
  const pools: Db[] = []
  const connect = async () => {
    const db = await openPostgres({ url, poolSize: 20 })
    pools.push(db)
    return db
  }
  const db = await connect()
  if (upTo !== undefined) await migrate(db, upTo)
  return {
    db,
    url,
    connect,
    async close() {
      for (const p of pools) await p.close()
      await dropDatabase(adminUrl, name)
    },
  }
}
