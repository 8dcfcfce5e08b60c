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
  action, action_token, otp_attempts, processor_ref, failure_data, metadata, created_at, updated_at`

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
}

/** A new charge is recorded before the processor is called: pending, with the call under way. */
export async function insertCharge(db: Queryable, scope: Scope, c: NewCharge): Promise<ChargeRow> {
  const res = await db.query<ChargeRow>(
    `INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
       description, statement_descriptor, status, capture, require_auth, processing, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, 'pending', $10, $11, 'authorize', $12::jsonb)
     RETURNING ${COLUMNS}`,
    [
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
    ],
  )
  return res.rows[0] as ChargeRow
}

/** With `lock`, the row stays locked until the transaction ends. */
export async function getCharge(db: Queryable, scope: Scope, id: string, lock = false): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(
    `SELECT ${COLUMNS} FROM charges WHERE id = $1 AND account_id = $2 AND livemode = $3${lock ? ' FOR UPDATE' : ''}`,
    [id, scope.accountId, scope.livemode],
  )
  return res.rows[0]
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
  r: { id: string; charge_id: string; amount: number; currency: string; reason: string },
): Promise<RefundRow> {
  const res = await db.query<RefundRow>(
    `INSERT INTO refunds (id, charge_id, amount, currency, reason, status) VALUES ($1, $2, $3, $4, $5, 'pending')
     RETURNING *`,
    [r.id, r.charge_id, r.amount, r.currency, r.reason],
  )
  return res.rows[0] as RefundRow
}

export async function setRefundStatus(db: Queryable, id: string, status: RefundRow['status']): Promise<void> {
  await db.query('UPDATE refunds SET status = $2, updated_at = now() WHERE id = $1', [id, status])
}

export async function refundsOf(db: Queryable, chargeIds: string[]): Promise<RefundRow[]> {
  if (chargeIds.length === 0) return []
  const res = await db.query<RefundRow>('SELECT * FROM refunds WHERE charge_id = ANY($1::text[]) ORDER BY id', [
    chargeIds,
  ])
  return res.rows
}
