import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Db } from './db.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))

interface Migration {
  version: number
  name: string
  sql: string
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .map((f) => ({
      version: Number.parseInt(f, 10),
      name: f,
      sql: readFileSync(`${dir}/${f}`, 'utf8'),
    }))
    .sort((a, b) => a.version - b.version)
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
 * migrates, the others wait.
 */
export async function migrate(db: Db, upTo = Number.POSITIVE_INFINITY): Promise<string[]> {
  const applied: string[] = []
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7316001)')
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
  })
  for (const m of loadMigrations().filter((m) => m.version <= upTo)) {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(7316001)')
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version])
      if (done.rows.length > 0) return
      await tx.exec(m.sql)
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name])
      applied.push(m.name)
    })
  }
  return applied
}
