import type { Queryable } from './db.js'

/** How far an account's test clock runs ahead, in seconds; undefined when no such account. */
export async function testClockOffset(db: Queryable, accountId: string): Promise<number | undefined> {
  const res = await db.query<{ offset: string }>(
    'SELECT test_clock_offset_seconds AS offset FROM accounts WHERE id = $1',
    [accountId],
  )
  return res.rows[0] === undefined ? undefined : Number(res.rows[0].offset)
}

/** Moves an account's test clock forward by `seconds` in one statement, so that advances at once all count. */
export async function advanceTestClock(db: Queryable, accountId: string, seconds: number): Promise<number | undefined> {
  const res = await db.query<{ offset: string }>(
    `UPDATE accounts SET test_clock_offset_seconds = test_clock_offset_seconds + $2 WHERE id = $1
     RETURNING test_clock_offset_seconds AS offset`,
    [accountId, seconds],
  )
  return res.rows[0] === undefined ? undefined : Number(res.rows[0].offset)
}
