import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Db } from './db.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))

interface Migration {
  version: number
  name: string
  sql: string
  /** of its text, its line ends made one: what a database that applied it records */
  digest: string
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .map((f) => {
      const sql = readFileSync(`${dir}/${f}`, 'utf8')
      const digest = createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex')
      return { version: Number.parseInt(f, 10), name: f, sql, digest }
    })
    .sort((a, b) => a.version - b.version)
}

/** A database whose schema these migrations cannot bring up to date. */
export class SchemaMismatchError extends Error {
  override name = 'SchemaMismatchError'
}

/** A digest of every migration's name and text: databases migrated by the same set share it. */
export function migrationsDigest(): string {
  const digest = createHash('sha256')
  for (const m of loadMigrations()) digest.update(`${m.name}\n${m.sql}\n`)
  return digest.digest('hex')
}

/**
 * Applies the numbered migrations not yet applied, each in its own transaction, up to `upTo` (all
 * by default). An advisory lock lets several processes start against one database at once: one
 * migrates, the others wait. A database that applied a migration these do not have, or another
 * text under its name (one made by another version of the service), is refused with
 * SchemaMismatchError before anything is applied: applying the rest would leave it a schema that
 * is neither.
 */
export async function migrate(db: Db, upTo = Number.POSITIVE_INFINITY): Promise<string[]> {
  const known = loadMigrations()
  const migrations = known.filter((m) => m.version <= upTo)
  const applied: string[] = []
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7316001)')
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      digest text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const recorded = await tx.query<{ version: number; name: string; digest: string | null }>(
      `SELECT version, name, to_jsonb(m) ->> 'digest' AS digest FROM schema_migrations m ORDER BY version`,
    )
    for (const r of recorded.rows) {
      const same = known.find((m) => m.version === r.version)
      if (same?.name !== r.name || same.digest !== r.digest) {
        throw new SchemaMismatchError(
          `the database's schema was made by another version of Jackdaw (its migration ${r.name} is not this ` +
            "version's), and cannot be brought up to date: give the service a new database (with the embedded " +
            'store, a new data directory)',
        )
      }
    }
  })
  for (const m of migrations) {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(7316001)')
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version])
      if (done.rows.length > 0) return
      await tx.exec(m.sql)
      await tx.query('INSERT INTO schema_migrations (version, name, digest) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        m.digest,
      ])
      applied.push(m.name)
    })
  }
  return applied
}
