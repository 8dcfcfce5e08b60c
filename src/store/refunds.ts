import type { Queryable } from './db.js'

export interface RefundRow {
  id: string
  charge_id: string
  amount: number
  currency: string
  reason: string
  status: 'pending' | 'succeeded' | 'failed'
  created_at: string
  updated_at: string
}

/** The columns of a refund's row, named here only. */
export const REFUND_COLUMNS = [
  'id',
  'charge_id',
  'amount',
  'currency',
  'reason',
  'status',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof RefundRow)[]

const SELECT = REFUND_COLUMNS.join(', ')

const INSERT_REFUND = `INSERT INTO refunds (id, charge_id, amount, currency, reason, status, idempotency_key)
   VALUES ($1, $2, $3, $4, $5, 'pending', $6) RETURNING ${SELECT}`

export async function insertRefund(
  db: Queryable,
  r: {
    id: string
    charge_id: string
    amount: number
    currency: string
    reason: string
    idempotency_key: string | null
  },
): Promise<RefundRow> {
  const res = await db.query<RefundRow>(INSERT_REFUND, [
    r.id,
    r.charge_id,
    r.amount,
    r.currency,
    r.reason,
    r.idempotency_key,
  ])
  return res.rows[0] as RefundRow
}

const REFUND_BY_KEY = `SELECT ${SELECT} FROM refunds WHERE charge_id = $1 AND idempotency_key = $2
   ORDER BY id DESC LIMIT 1`

/** The refund a request with this Idempotency-Key recorded, if its first attempt got that far. */
export async function getRefundByKey(db: Queryable, chargeId: string, key: string): Promise<RefundRow | undefined> {
  const res = await db.query<RefundRow>(REFUND_BY_KEY, [chargeId, key])
  return res.rows[0]
}

/**
 * Settles a pending refund. Answers what its charge's succeeded refunds then add up to, this one
 * included; undefined if it was settled already (by a recovery sweep, say).
 */
export async function setRefundStatus(
  db: Queryable,
  id: string,
  status: RefundRow['status'],
): Promise<{ confirmed: number } | undefined> {
  const res = await db.query<{ confirmed: string }>(
    `UPDATE refunds r SET status = $2, updated_at = now() WHERE r.id = $1 AND r.status = 'pending'
     RETURNING (SELECT coalesce(sum(o.amount), 0) FROM refunds o
       WHERE o.charge_id = r.charge_id AND o.status = 'succeeded' AND o.id <> r.id)
       + CASE WHEN r.status = 'succeeded' THEN r.amount ELSE 0 END AS confirmed`,
    [id, status],
  )
  const row = res.rows[0]
  return row === undefined ? undefined : { confirmed: Number(row.confirmed) }
}

const CLAIM_PENDING_REFUNDS = `UPDATE refunds SET pending_since = now() WHERE id IN (
     SELECT id FROM refunds
     WHERE status = 'pending' AND pending_since < now() - $1 * interval '1 millisecond'
     ORDER BY pending_since LIMIT $2 FOR UPDATE SKIP LOCKED)
   RETURNING ${SELECT}`

/**
 * Claims refunds pending longer than `graceMs` by the real time (their process died), one sweeper
 * each: the claim begins the call again, so others pass them by for another grace. The real time,
 * as for a charge's operation (claimInterrupted), whatever a test clock says.
 */
export async function claimPendingRefunds(db: Queryable, graceMs: number, limit = 20): Promise<RefundRow[]> {
  const res = await db.query<RefundRow>(CLAIM_PENDING_REFUNDS, [graceMs, limit])
  return res.rows
}
