import type { Queryable } from './db.js'

/** An account's test-mode fault rules as they are kept: none when it has set none. */
export async function testFaultRules<T>(db: Queryable, accountId: string): Promise<T[]> {
  const res = await db.query<{ rules: T[] }>('SELECT rules FROM test_faults WHERE account_id = $1', [accountId])
  return res.rows[0]?.rules ?? []
}

/** Replaces an account's test-mode fault rules; no rules leaves no row. */
export async function replaceTestFaultRules(db: Queryable, accountId: string, rules: unknown[]): Promise<void> {
  if (rules.length === 0) {
    await db.query('DELETE FROM test_faults WHERE account_id = $1', [accountId])
    return
  }
  await db.query(
    `INSERT INTO test_faults (account_id, rules) VALUES ($1, $2::jsonb)
     ON CONFLICT (account_id) DO UPDATE SET rules = EXCLUDED.rules, updated_at = now()`,
    [accountId, JSON.stringify(rules)],
  )
}
