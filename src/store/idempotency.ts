import type { Queryable } from './db.js'
import type { Scope } from './scope.js'

export type Claim =
  /** `made`: when the key's record was made (MADE) */
  | { kind: 'claimed'; made: string }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' }

/** How long a claim holds, by default, before another request may take it over (its holder died). */
export const DEFAULT_LEASE_SECONDS = 60
const TTL_HOURS = 24

const DELETE_EXPIRED_KEY = `DELETE FROM idempotency_keys WHERE account_id = $1 AND livemode = $2 AND key = $3
  AND created_at < account_now($1, $2) - interval '${TTL_HOURS} hours'`

/** When a record was made, in microseconds since 1970: with its key, it names one use of the key. */
const MADE = `floor(extract(epoch FROM created_at) * 1000000)::bigint::text AS made`
const INSERT_KEY = `INSERT INTO idempotency_keys (account_id, livemode, key, request_hash, locked_until)
   VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second')
   ON CONFLICT DO NOTHING RETURNING ${MADE}`
const FIND_KEY = `SELECT request_hash, status_code, response_body FROM idempotency_keys
   WHERE account_id = $1 AND livemode = $2 AND key = $3`
const TAKE_OVER_KEY = `UPDATE idempotency_keys SET locked_until = now() + $4 * interval '1 second'
   WHERE account_id = $1 AND livemode = $2 AND key = $3 AND status_code IS NULL AND locked_until < now()
   RETURNING ${MADE}`

/**
 * Claims a key for one request. The insert is the lock: of concurrent requests with one key,
 * one inserts the row and runs; the others see it and are told to wait or get the stored answer.
 */
export async function claimKey(
  db: Queryable,
  scope: Scope,
  key: string,
  requestHash: string,
  leaseSeconds = DEFAULT_LEASE_SECONDS,
): Promise<Claim> {
  const p = [scope.accountId, scope.livemode, key]
  // an expired record is gone, as if it had never been
  await db.query(DELETE_EXPIRED_KEY, p)
  const inserted = await db.query<{ made: string }>(INSERT_KEY, [...p, requestHash, leaseSeconds])
  const made = inserted.rows[0]?.made
  if (made !== undefined) return { kind: 'claimed', made }
  const found = await db.query<{ request_hash: string; status_code: number | null; response_body: string | null }>(
    FIND_KEY,
    p,
  )
  const row = found.rows[0]
  if (!row) return claimKey(db, scope, key, requestHash, leaseSeconds)
  if (row.request_hash !== requestHash) return { kind: 'mismatch' }
  if (row.status_code !== null && row.response_body !== null) {
    return { kind: 'replay', statusCode: row.status_code, body: row.response_body }
  }
  const takenOver = await db.query<{ made: string }>(TAKE_OVER_KEY, [...p, leaseSeconds])
  const retried = takenOver.rows[0]?.made
  return retried !== undefined ? { kind: 'claimed', made: retried } : { kind: 'in_flight' }
}

export async function completeKey(
  db: Queryable,
  scope: Scope,
  key: string,
  statusCode: number,
  body: string,
): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET status_code = $4, response_body = $5, locked_until = NULL
     WHERE account_id = $1 AND livemode = $2 AND key = $3`,
    [scope.accountId, scope.livemode, key, statusCode, body],
  )
}

/**
 * After a fault of the service's own, the key is let go so that a retry of the same request runs
 * again; it stays bound to that request, whose first attempt may have left work for the retry to
 * finish, so another request with the key is still a mismatch.
 */
export async function releaseKey(db: Queryable, scope: Scope, key: string): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET locked_until = '-infinity'
     WHERE account_id = $1 AND livemode = $2 AND key = $3 AND status_code IS NULL`,
    [scope.accountId, scope.livemode, key],
  )
}

/** A request refused before it changed anything does not use its key up: the key is forgotten. */
export async function forgetKey(db: Queryable, scope: Scope, key: string): Promise<void> {
  await db.query(
    'DELETE FROM idempotency_keys WHERE account_id = $1 AND livemode = $2 AND key = $3 AND status_code IS NULL',
    [scope.accountId, scope.livemode, key],
  )
}

/**
 * Idempotency records are kept 24 hours from when they were made, by their account's time: the
 * records of a test clock run ahead go sooner, by their accounts' own.
 */
export async function purgeExpiredKeys(db: Queryable): Promise<number> {
  const res = await db.query(
    `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${TTL_HOURS} hours' RETURNING key`,
  )
  const ahead = await db.query(
    `DELETE FROM idempotency_keys k USING accounts a
     WHERE a.id = k.account_id AND NOT k.livemode AND (a.test_clock_offset_seconds > 0 OR a.test_clock_start IS NOT NULL)
       AND k.created_at < account_now(a.id, false) - interval '${TTL_HOURS} hours'
     RETURNING key`,
  )
  return res.rows.length + ahead.rows.length
}
