import type { ChargeStatus } from '../domain/charge-state.js'
import type { Queryable } from './db.js'
import { listPage, type Page, type PageRequest } from './list.js'
import type { Scope } from './scope.js'

export interface ChargeRow {
  id: string
  account_id: string
  livemode: boolean
  source_id: string
  customer_id: string | null
  amount: number
  amount_authorized: number
  amount_refunded: number
  currency: string
  description: string
  statement_descriptor: string
  status: ChargeStatus
  authorized: boolean
  captured: boolean
  capture: boolean
  require_auth: boolean
  processing: string | null
  action: Record<string, unknown> | null
  action_token: string | null
  otp_attempts: number
  processor_ref: string | null
  failure_data: Record<string, unknown> | null
  metadata: Record<string, unknown>
  operation_key: string | null
  created_at: string
  updated_at: string
}

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

const COLUMNS = `id, account_id, livemode, source_id, customer_id, amount, amount_authorized, amount_refunded,
  currency, description, statement_descriptor, status, authorized, captured, capture, require_auth, processing,
  action, action_token, otp_attempts, processor_ref, failure_data, metadata, operation_key, created_at, updated_at`

export interface NewCharge {
  id: string
  source_id: string
  customer_id: string | null
  amount: number
  currency: string
  description: string
  statement_descriptor: string
  capture: boolean
  require_auth: boolean
  metadata: object
  idempotency_key: string | null
}

/** $1 … $13 of both statements that record a new charge. */
function newChargeParams(scope: Scope, c: NewCharge): unknown[] {
  return [
    c.id,
    scope.accountId,
    scope.livemode,
    c.source_id,
    c.customer_id,
    c.amount,
    c.currency,
    c.description,
    c.statement_descriptor,
    c.capture,
    c.require_auth,
    JSON.stringify(c.metadata),
    c.idempotency_key,
  ]
}

/** A new charge is recorded before the processor is called: pending, with the call under way. */
export async function insertCharge(db: Queryable, scope: Scope, c: NewCharge): Promise<ChargeRow> {
  const res = await db.query<ChargeRow>(
    `INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
       description, statement_descriptor, status, capture, require_auth, processing, metadata, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, 'pending', $10, $11, 'authorize', $12::jsonb, $13)
     RETURNING ${COLUMNS}`,
    newChargeParams(scope, c),
  )
  return res.rows[0] as ChargeRow
}

/**
 * Takes an unused source that belongs to no customer and records the charge on it, in one
 * statement; undefined (and nothing written) when the source is not such a source.
 */
export async function insertChargeTakingFreeSource(
  db: Queryable,
  scope: Scope,
  c: NewCharge,
): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(
    `WITH taken AS (
       UPDATE sources SET used = true, updated_at = now()
       WHERE id = $4 AND account_id = $2 AND livemode = $3 AND used = false AND customer_id IS NULL AND vaulted = false
       RETURNING id
     )
     INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
       description, statement_descriptor, status, capture, require_auth, processing, metadata, idempotency_key)
     SELECT $1, $2, $3, taken.id, $5, $6, $6, $7, $8, $9, 'pending', $10, $11, 'authorize', $12::jsonb, $13 FROM taken
     RETURNING ${COLUMNS}`,
    newChargeParams(scope, c),
  )
  return res.rows[0]
}

/** With `lock`, the row stays locked until the transaction ends. */
export async function getCharge(db: Queryable, scope: Scope, id: string, lock = false): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(
    `SELECT ${COLUMNS} FROM charges WHERE id = $1 AND account_id = $2 AND livemode = $3${lock ? ' FOR UPDATE' : ''}`,
    [id, scope.accountId, scope.livemode],
  )
  return res.rows[0]
}

/** The charge a create request with this Idempotency-Key made, if its first attempt got that far. */
export async function getChargeByKey(db: Queryable, scope: Scope, key: string): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(
    `SELECT ${COLUMNS} FROM charges WHERE account_id = $1 AND livemode = $2 AND idempotency_key = $3
     AND created_at > now() - interval '24 hours' ORDER BY id DESC LIMIT 1`,
    [scope.accountId, scope.livemode, key],
  )
  return res.rows[0]
}

/**
 * Claims charges whose operation has been under way longer than `graceMs` (its process died),
 * one sweeper each: the claim pushes updated_at on, so others pass them by for another grace.
 */
export async function claimInterrupted(db: Queryable, graceMs: number, limit = 20): Promise<ChargeRow[]> {
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET updated_at = now() WHERE id IN (
       SELECT id FROM charges WHERE processing IS NOT NULL AND updated_at < now() - $1 * interval '1 millisecond'
       ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [graceMs, limit],
  )
  return res.rows
}

export async function claimPendingRefunds(db: Queryable, graceMs: number, limit = 20): Promise<RefundRow[]> {
  const res = await db.query<RefundRow>(
    `UPDATE refunds SET updated_at = now() WHERE id IN (
       SELECT id FROM refunds WHERE status = 'pending' AND updated_at < now() - $1 * interval '1 millisecond'
       ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [graceMs, limit],
  )
  return res.rows
}

/** For the hosted page, which the payer reaches with a token, not a key. */
export async function getChargeById(db: Queryable, id: string): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(`SELECT ${COLUMNS} FROM charges WHERE id = $1`, [id])
  return res.rows[0]
}

export function listCharges(db: Queryable, scope: Scope, page: PageRequest): Promise<Page<ChargeRow>> {
  return listPage<ChargeRow>(db, 'charges', COLUMNS, scope, page)
}

/** The columns an outcome may change; names are fixed here, values are parameters. */
export type ChargePatch = Partial<
  Pick<
    ChargeRow,
    | 'amount'
    | 'amount_refunded'
    | 'status'
    | 'authorized'
    | 'captured'
    | 'processing'
    | 'action'
    | 'action_token'
    | 'otp_attempts'
    | 'processor_ref'
    | 'failure_data'
    | 'operation_key'
  >
>

const JSON_COLUMNS = new Set(['action', 'failure_data'])
const PATCHABLE = new Set([
  'amount',
  'amount_refunded',
  'status',
  'authorized',
  'captured',
  'processing',
  'action',
  'action_token',
  'otp_attempts',
  'processor_ref',
  'failure_data',
  'operation_key',
])

export async function patchCharge(db: Queryable, id: string, patch: ChargePatch): Promise<ChargeRow> {
  const sets: string[] = []
  const params: unknown[] = [id]
  for (const [column, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (!PATCHABLE.has(column)) throw new Error(`not a patchable charge column: ${column}`)
    params.push(JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value)
    sets.push(`${column} = $${params.length}${JSON_COLUMNS.has(column) ? '::jsonb' : ''}`)
  }
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET ${sets.join(', ')}, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    params,
  )
  return res.rows[0] as ChargeRow
}

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
  const res = await db.query<RefundRow>(
    `INSERT INTO refunds (id, charge_id, amount, currency, reason, status, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6) RETURNING *`,
    [r.id, r.charge_id, r.amount, r.currency, r.reason, r.idempotency_key],
  )
  return res.rows[0] as RefundRow
}

export async function getRefundByKey(db: Queryable, chargeId: string, key: string): Promise<RefundRow | undefined> {
  const res = await db.query<RefundRow>(
    `SELECT * FROM refunds WHERE charge_id = $1 AND idempotency_key = $2 AND created_at > now() - interval '24 hours'
     ORDER BY id DESC LIMIT 1`,
    [chargeId, key],
  )
  return res.rows[0]
}

/** Settles a pending refund; false if it was settled already (by a recovery sweep, say). */
export async function setRefundStatus(db: Queryable, id: string, status: RefundRow['status']): Promise<boolean> {
  const res = await db.query(
    "UPDATE refunds SET status = $2, updated_at = now() WHERE id = $1 AND status = 'pending' RETURNING id",
    [id, status],
  )
  return res.rows.length > 0
}

export async function refundsOf(db: Queryable, chargeIds: string[]): Promise<RefundRow[]> {
  if (chargeIds.length === 0) return []
  const res = await db.query<RefundRow>('SELECT * FROM refunds WHERE charge_id = ANY($1::text[]) ORDER BY id', [
    chargeIds,
  ])
  return res.rows
}
