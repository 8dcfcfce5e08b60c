import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { openPostgres } from '../store/db.js'
import { migrate } from '../store/migrate.js'

/** Where the tests' PostgreSQL is, and the migrated database each test database is cloned from. */
export interface TestDatabase {
  adminUrl: string
  template: string
}

/** The connection string of one database of the server `adminUrl` names. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

async function admin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** A new database: a copy of `template`, or empty. Its name. */
export async function createDatabase(adminUrl: string, template?: string): Promise<string> {
  const name = `jackdaw_t_${randomBytes(6).toString('hex')}`
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`))
  return name
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
}

/** A database with every migration applied, to clone; no connection to it is left open. */
export async function createTemplate(adminUrl: string): Promise<string> {
  const name = await createDatabase(adminUrl)
  const db = await openPostgres({ url: databaseUrl(adminUrl, name), poolSize: 1 })
  try {
    await migrate(db)
  } finally {
    await db.close()
  }
  return name
}
