import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { openPostgres } from '../store/db.js'
import { migrate, migrationsDigest } from '../store/migrate.js'

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

/** the advisory lock, on the server's `postgres` database, of the process making the shared template */
const TEMPLATE_LOCK = 7316003
const TEMPLATE_PREFIX = 'jackdaw_template_'

/**
 * The migrated template of a migration set (this version's unless told) on the server `adminUrl`
 * names, shared by every process of a run and by later runs: made once, by whichever process comes
 * first, under another name and renamed when whole, so no process ever clones half a template.
 * Templates of other versions are left alone: a run of another version may be cloning them.
 */
export async function sharedTemplate(adminUrl: string, digest = migrationsDigest()): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${digest.slice(0, 16)}`
  return admin(adminUrl, async (c) => {
    const exists = async () => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rows.length > 0
    if (await exists()) return name
    await c.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK])
    try {
      if (!(await exists())) await c.query(`ALTER DATABASE ${await createTemplate(adminUrl)} RENAME TO ${name}`)
      return name
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK])
    }
  })
}

/** How many clones of a shared template are kept ready. */
const SPARES = 2
const SPARE_PREFIX = 'jackdaw_spare_'

/** The prefix of the ready clones of `template`, a template sharedTemplate made. */
const sparesOf = (template: string) => `${SPARE_PREFIX}${template.slice(TEMPLATE_PREFIX.length)}_`

/**
 * Makes a clone of `template` to keep ready, unless enough are; never throws. Started after a
 * database is taken, so that the next start (a test file's, most often in another process) finds
 * one rather than waits for a copy.
 */
export async function makeSpare(adminUrl: string, template: string): Promise<void> {
  try {
    await admin(adminUrl, async (c) => {
      const ready = await c.query('SELECT 1 FROM pg_database WHERE starts_with(datname, $1)', [sparesOf(template)])
      if (ready.rows.length >= SPARES) return
      await c.query(`CREATE DATABASE ${sparesOf(template)}${randomBytes(6).toString('hex')} TEMPLATE ${template}`)
    })
  } catch {
    // a spare saves time only: the next start copies the template itself
  }
}

/**
 * A new database cloned from a shared template: one of its ready clones, renamed (a rename is
 * atomic, so two processes never take the same one), or else a copy made now. Either way a new
 * spare is started. Its name, and the spare's making, which a process may await before it ends.
 */
export async function takeDatabase(
  adminUrl: string,
  template: string,
): Promise<{ name: string; spare: Promise<void> }> {
  const name = `jackdaw_t_${randomBytes(6).toString('hex')}`
  const taken = await admin(adminUrl, async (c) => {
    const ready = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [
      sparesOf(template),
    ])
    for (const { datname } of ready.rows) {
      try {
        await c.query(`ALTER DATABASE "${datname}" RENAME TO ${name}`)
        return true
      } catch {
        // taken by another process meanwhile
      }
    }
    return false
  })
  if (!taken) await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`))
  return { name, spare: makeSpare(adminUrl, template) }
}
