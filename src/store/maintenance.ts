import type { Queryable } from './db.js'

/**
 * The embedded store has no autovacuum: PGlite runs PostgreSQL as one process with no background
 * workers. Without statistics the planner guesses that a few rows match an account and reads every
 * charge of it to sort them, so a page of charges costs time in proportion to the charges stored;
 * without vacuuming, every update's old row version stays. This pass does what autovacuum would,
 * with its default thresholds.
 */
export interface MaintenancePass {
  analyzed: string[]
  vacuumed: string[]
}

// autovacuum's defaults: analyze after 50 + 10% of a table's rows changed, vacuum when 50 + 20%
// are dead
const DUE = `
  SELECT relname AS name,
    n_dead_tup > 50 + 0.2 * n_live_tup AS vacuum,
    n_mod_since_analyze > 50 + 0.1 * n_live_tup AS analyze
  FROM pg_stat_user_tables
  WHERE schemaname = current_schema()
    AND (n_dead_tup > 50 + 0.2 * n_live_tup OR n_mod_since_analyze > 50 + 0.1 * n_live_tup)
  ORDER BY relname`

export async function maintainTables(db: Queryable): Promise<MaintenancePass> {
  // a backend publishes its counts at most once a second; the pass reads them published
  await db.query('SELECT pg_stat_force_next_flush()')
  const due = await db.query<{ name: string; vacuum: boolean; analyze: boolean }>(DUE)
  const pass: MaintenancePass = { analyzed: [], vacuumed: [] }
  for (const t of due.rows) {
    // names come from the catalog, quoted as identifiers all the same
    const table = `"${t.name.replaceAll('"', '""')}"`
    await db.exec(t.vacuum ? `VACUUM (ANALYZE) ${table}` : `ANALYZE ${table}`)
    pass.analyzed.push(t.name)
    if (t.vacuum) pass.vacuumed.push(t.name)
  }
  return pass
}

/** A pass every intervalMs until stopped; a failed pass is reported and the next one tried. */
export function startMaintenance(
  db: Queryable,
  intervalMs: number,
  onError: (err: unknown) => void,
): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = maintainTables(db)
      .catch(onError)
      .finally(() => {
        running = undefined
      })
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
