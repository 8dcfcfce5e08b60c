import { performance } from 'node:perf_hooks'
import { timestampPlus } from '../domain/time.js'
import type { Queryable } from './db.js'
import type { Scope } from './scope.js'

export interface ClockReading {
  /** how far the clock has been advanced in all, in seconds */
  offset: number
  /** the account's test-mode time (account_now), in the API's timestamp form */
  now: string
}

/** An account's test clock; undefined when no such account. */
export async function testClock(db: Queryable, accountId: string): Promise<ClockReading | undefined> {
  const res = await db.query<{ offset: string; now: string }>(
    'SELECT test_clock_offset_seconds AS offset, account_now(id, false) AS now FROM accounts WHERE id = $1',
    [accountId],
  )
  const row = res.rows[0]
  return row === undefined ? undefined : { offset: Number(row.offset), now: row.now }
}

/**
 * Moves an account's test clock forward by `seconds` in one statement, so that advances at once
 * all count, unless that would take it more than `maxOffset` seconds ahead: then it stays, and the
 * answer says so with how far it runs ahead now. The account's notify calls waiting for a retry
 * come due that much sooner: their due times stay on the real time, which the delivery worker
 * compares them with. The count of advances moves on, for sweeps in other processes to see.
 * `key`: the request's Idempotency-Key as kept, recorded with the advance; an advance sent again
 * with it (its answer lost) moves nothing and answers the clock as it is (`repeated`). Undefined
 * when no such account.
 */
export async function advanceTestClock(
  db: Queryable,
  accountId: string,
  seconds: number,
  maxOffset: number,
  key?: string,
): Promise<(ClockReading & { moved: boolean; repeated: boolean }) | undefined> {
  const res = await db.query<{ offset: string; now: string; moved: boolean; repeated: boolean }>(
    `WITH made AS (
       INSERT INTO test_clock_advances_made (account_id, livemode, key)
       SELECT $1, false, $4 WHERE $4::text IS NOT NULL
       ON CONFLICT DO NOTHING RETURNING key
     ), moved AS (
       UPDATE accounts SET test_clock_offset_seconds = test_clock_offset_seconds + $2
       WHERE id = $1 AND test_clock_offset_seconds + $2 <= $3 AND ($4::text IS NULL OR EXISTS (SELECT FROM made))
       RETURNING test_clock_offset_seconds, coalesce(test_clock_start, now()) + test_clock_offset_seconds * interval '1 second' AS now
     ), due AS (
       UPDATE deliveries SET next_attempt_at = next_attempt_at - $2 * interval '1 second'
       WHERE account_id = $1 AND NOT livemode AND status = 'pending' AND lease_token IS NULL AND EXISTS (SELECT FROM moved)
     )
     SELECT test_clock_offset_seconds AS offset, now, nextval('test_clock_advances') IS NOT NULL AS moved,
       false AS repeated
     FROM moved
     UNION ALL
     SELECT test_clock_offset_seconds, account_now(id, false), false, $4::text IS NOT NULL AND NOT EXISTS (SELECT FROM made)
     FROM accounts WHERE id = $1 AND NOT EXISTS (SELECT FROM moved)`,
    [accountId, seconds, maxOffset, key ?? null],
  )
  const row = res.rows[0]
  return row === undefined
    ? undefined
    : { offset: Number(row.offset), now: row.now, moved: row.moved, repeated: row.repeated }
}

/** How many advances any account's clock has had: a change tells a sweep to run at once. */
export async function testClockAdvances(db: Queryable): Promise<string> {
  const res = await db.query<{ n: string }>('SELECT last_value::text || is_called::text AS n FROM test_clock_advances')
  return res.rows[0]?.n ?? ''
}

/**
 * A test-mode account's time as a statement read it, so that its time a moment later is known
 * without asking again: the statement that records a new charge reads it, and the charge's outcome,
 * recorded after the processor's answer, is stamped with it moved on by the time since. A clock
 * advanced in between does not move that outcome: it was decided before the advance was seen.
 */
export interface AccountTimeReading {
  /** the account's time (account_now) when read, in the API's form */
  time: string
  /** it runs with the real time; a deterministic account's clock moves only when advanced */
  runs: boolean
  /** when it was read, on this process's monotonic clock (performance.now) */
  readAt: number
}

/**
 * The account's time for a test-mode object, or undefined in live mode, whose time is the real
 * one: for a time the service works out before it stores it. From a `reading` taken a moment
 * before, it is worked out without a round trip.
 */
export async function accountNow(
  db: Queryable,
  scope: Scope,
  reading?: AccountTimeReading,
): Promise<string | undefined> {
  if (scope.livemode) return undefined
  if (reading) return reading.runs ? timestampPlus(reading.time, performance.now() - reading.readAt) : reading.time
  const res = await db.query<{ now: string }>('SELECT account_now($1, false) AS now', [scope.accountId])
  return res.rows[0]?.now
}
