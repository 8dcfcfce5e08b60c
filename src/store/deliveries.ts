import type { Db, Queryable } from './db.js'
import { listPage, type Page, type PageRequest } from './list.js'
import type { Scope } from './scope.js'

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface DeliveryRow {
  id: string
  account_id: string
  livemode: boolean
  event_id: string
  event_type: string
  url: string
  status: DeliveryStatus
  attempt_count: number
  retry: boolean
  next_attempt_at: string | null
  delivered_at: string | null
  created_at: string
  updated_at: string
}

export interface AttemptRow {
  delivery_id: string
  number: number
  started_at: string
  duration_ms: number
  status_code: number | null
  error: string | null
  succeeded: boolean
}

/** A delivery a worker holds: it alone sends this attempt until the lease runs out. */
export interface ClaimedDelivery {
  id: string
  account_id: string
  livemode: boolean
  url: string
  payload: string
  /** the number of this attempt */
  attempt_count: number
  retry: boolean
  claimed_at: string
  lease_token: string
}

const COLUMNS =
  'id, account_id, livemode, event_id, event_type, url, status, attempt_count, retry, next_attempt_at, delivered_at, created_at, updated_at'

const ATTEMPT_COLUMNS = 'delivery_id, number, started_at, duration_ms, status_code, error, succeeded'

/** The error class of an attempt whose worker stopped, or lost its lease, before recording an outcome. */
export const INTERRUPTED = 'interrupted'

export async function insertDelivery(
  db: Queryable,
  scope: Scope,
  d: { id: string; eventId: string; eventType: string; url: string; payload: string },
): Promise<void> {
  await db.query(
    `INSERT INTO deliveries (id, account_id, livemode, event_id, event_type, url, payload, status, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', now())`,
    [d.id, scope.accountId, scope.livemode, d.eventId, d.eventType, d.url, d.payload],
  )
}

const ANY_DELIVERY_BY_ID = `SELECT ${COLUMNS} FROM deliveries WHERE id = $1`
const DELIVERY_BY_ID = `${ANY_DELIVERY_BY_ID} AND account_id = $2 AND livemode = $3`

/** One delivery; without a scope (the operator's command line) any account's. */
export async function getDelivery(db: Queryable, id: string, scope?: Scope): Promise<DeliveryRow | undefined> {
  const res = scope
    ? await db.query<DeliveryRow>(DELIVERY_BY_ID, [id, scope.accountId, scope.livemode])
    : await db.query<DeliveryRow>(ANY_DELIVERY_BY_ID, [id])
  return res.rows[0]
}

/** A page of deliveries, newest first; with `chargeId`, only those of that charge's events. */
export function listDeliveries(
  db: Queryable,
  scope: Scope,
  page: PageRequest,
  chargeId?: string | undefined,
): Promise<Page<DeliveryRow>> {
  const filter =
    chargeId === undefined
      ? undefined
      : { where: (p: string) => `event_id IN (SELECT e.id FROM events e WHERE e.charge_id = ${p})`, value: chargeId }
  return listPage<DeliveryRow>(db, 'deliveries', COLUMNS, scope, page, filter)
}

const ATTEMPTS_OF = `SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, number`

export async function attemptsOf(db: Queryable, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return []
  const res = await db.query<AttemptRow>(ATTEMPTS_OF, [deliveryIds])
  return res.rows
}

/** A due delivery a worker may take, as it chooses among them. */
export interface DueDelivery {
  id: string
  account_id: string
  url: string
}

export interface ClaimOptions {
  limit: number
  leaseMs: number
  token: string
  /** accounts none of whose deliveries are wanted now (the worker has as many of theirs in flight as it allows) */
  skipAccounts?: string[] | undefined
  /** the most of one account's deliveries offered to `take` at once */
  perAccount?: number | undefined
  /**
   * Asked of each due delivery in turn, fairly ordered: every account's earliest first, then every
   * account's second, and so on. Only those it takes are claimed (all, up to `limit`, when absent).
   */
  take?: ((d: DueDelivery) => boolean) | undefined
}

/**
 * Takes up to `limit` due deliveries for one worker, in turns across accounts, so that one account
 * with many calls due does not hold back another's. Rows another worker is claiming are skipped,
 * not waited for, and a claimed row stays out of every other worker's reach until its lease runs
 * out, so each attempt is made by one worker only. A row whose previous claim never reported back
 * (its worker died) has that attempt recorded as interrupted before it is claimed again.
 */
export function claimDue(db: Db, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  const perAccount = opts.perAccount ?? opts.limit
  return db.transaction(async (tx) => {
    // the rows offered are locked while the worker chooses; those it leaves are free at commit
    const due = await tx.query<DueDelivery>(
      `SELECT d.id, d.account_id, d.url
       FROM deliveries d
       JOIN (SELECT id, row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, id) AS turn
             FROM deliveries
             WHERE status = 'pending' AND next_attempt_at <= now() AND NOT (account_id = ANY($3::text[]))) t
         ON t.id = d.id
       WHERE t.turn <= $2 AND d.status = 'pending' AND d.next_attempt_at <= now()
       ORDER BY t.turn, d.next_attempt_at, d.id
       LIMIT $1
       FOR UPDATE OF d SKIP LOCKED`,
      [Math.max(opts.limit, opts.take ? opts.limit * 4 : 0), perAccount, opts.skipAccounts ?? []],
    )
    const take = opts.take ?? (() => true)
    const ids: string[] = []
    for (const row of due.rows) {
      if (ids.length >= opts.limit) break
      if (take(row)) ids.push(row.id)
    }
    if (ids.length === 0) return []
    await tx.query(
      `INSERT INTO delivery_attempts (${ATTEMPT_COLUMNS})
       SELECT id, attempt_count, claimed_at,
              GREATEST(0, floor(EXTRACT(EPOCH FROM (now() - claimed_at)) * 1000))::integer, NULL::integer, $2, false
       FROM deliveries
       WHERE id = ANY($1::text[]) AND lease_token IS NOT NULL AND attempt_count > 0 AND claimed_at IS NOT NULL
       ON CONFLICT (delivery_id, number) DO NOTHING`,
      [ids, INTERRUPTED],
    )
    const res = await tx.query<ClaimedDelivery>(
      `UPDATE deliveries
       SET attempt_count = attempt_count + 1,
           next_attempt_at = now() + $2::double precision * interval '1 millisecond',
           lease_token = $3,
           claimed_at = now(),
           updated_at = now()
       WHERE id = ANY($1::text[])
       RETURNING id, account_id, livemode, url, payload, attempt_count, retry, claimed_at, lease_token`,
      [ids, opts.leaseMs, opts.token],
    )
    return res.rows
  })
}

export interface Outcome {
  id: string
  number: number
  token: string
  startedAt: string
  durationMs: number
  statusCode: number | null
  error: string | null
  succeeded: boolean
  /** after a failed attempt: retry after this many milliseconds, or give up */
  retryInMs?: number | undefined
}

/**
 * Records an attempt and moves the delivery on. A success always counts, even from a worker whose
 * lease ran out: the receiver has the event. A failure moves the delivery on only while this
 * worker still holds it; otherwise another worker has taken it up and decides.
 */
export function recordOutcome(db: Db, o: Outcome): Promise<void> {
  return db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO delivery_attempts (${ATTEMPT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (delivery_id, number) DO UPDATE SET duration_ms = EXCLUDED.duration_ms,
         status_code = EXCLUDED.status_code, error = EXCLUDED.error, succeeded = EXCLUDED.succeeded`,
      [o.id, o.number, o.startedAt, Math.max(0, Math.round(o.durationMs)), o.statusCode, o.error, o.succeeded],
    )
    if (o.succeeded) {
      await tx.query(
        `UPDATE deliveries
         SET status = 'delivered', delivered_at = now(), next_attempt_at = NULL, lease_token = NULL,
             claimed_at = NULL, updated_at = now()
         WHERE id = $1 AND status <> 'delivered'`,
        [o.id],
      )
    } else if (o.retryInMs !== undefined) {
      await tx.query(
        `UPDATE deliveries
         SET next_attempt_at = now() + $3::double precision * interval '1 millisecond', lease_token = NULL,
             claimed_at = NULL, updated_at = now()
         WHERE id = $1 AND lease_token = $2 AND status = 'pending'`,
        [o.id, o.token, o.retryInMs],
      )
    } else {
      await tx.query(
        `UPDATE deliveries
         SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, claimed_at = NULL, updated_at = now()
         WHERE id = $1 AND lease_token = $2 AND status = 'pending'`,
        [o.id, o.token],
      )
    }
  })
}

/**
 * Puts a failed delivery back in the queue for one more attempt, due now; undefined when it is not
 * failed (or not the scope's). `key`: the request's Idempotency-Key, kept with the redelivery; the
 * request sent again with it (its answer lost) queues nothing more, whatever that attempt did
 * since, and is answered the delivery as it is.
 */
export async function requeueFailed(
  db: Queryable,
  id: string,
  scope?: Scope,
  key?: string,
): Promise<DeliveryRow | undefined> {
  const params: unknown[] = [id, key ?? null]
  let scoped = ''
  if (scope) {
    params.push(scope.accountId, scope.livemode)
    scoped = 'AND account_id = $3 AND livemode = $4'
  }
  const res = await db.query<DeliveryRow>(
    `WITH requeued AS (
       UPDATE deliveries
       SET status = 'pending', retry = false, next_attempt_at = now(), lease_token = NULL, claimed_at = NULL,
           updated_at = now(), redeliver_key = $2
       WHERE id = $1 AND status = 'failed' AND ($2::text IS NULL OR redeliver_key IS DISTINCT FROM $2) ${scoped}
       RETURNING ${COLUMNS}
     )
     SELECT ${COLUMNS} FROM requeued
     UNION ALL
     SELECT ${COLUMNS} FROM deliveries
     WHERE id = $1 AND $2::text IS NOT NULL AND redeliver_key = $2 ${scoped} AND NOT EXISTS (SELECT FROM requeued)`,
    params,
  )
  return res.rows[0]
}

/** Milliseconds until the next pending delivery is due (0 when one is due), or undefined when none is. */
export async function nextDueInMs(db: Queryable): Promise<number | undefined> {
  const res = await db.query<{ ms: string | number | null }>(
    `SELECT EXTRACT(EPOCH FROM (min(next_attempt_at) - now())) * 1000 AS ms FROM deliveries WHERE status = 'pending'`,
  )
  const ms = res.rows[0]?.ms
  if (ms === null || ms === undefined) return undefined
  return Math.max(0, Number(ms))
}
