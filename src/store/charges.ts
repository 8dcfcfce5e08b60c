import type { ChargeStatus } from '../domain/charge-state.js'
import type { Queryable } from './db.js'
import { columnNames, pick, selectPrefixed, timestampsFromJson } from './joined.js'
import { type Page, type PageRequest, pageWhere, toPage } from './list.js'
import type { Scope } from './scope.js'
import { SOURCE_NAMES, SOURCE_VIEW_NAMES, type SourceRow, type SourceSecrets, type SourceViewRow } from './sources.js'

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

const REFUND_NAMES = columnNames('id, charge_id, amount, currency, reason, status, created_at, updated_at')
const SOURCE_WITH_SECRETS = [...SOURCE_NAMES, 'card_number_enc', 'card_cvc_enc']

/** A charge with what its view shows: its source and its refunds, oldest first. */
export interface ChargeWithDetails {
  charge: ChargeRow
  source: SourceRow
  refunds: RefundRow[]
}

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

/**
 * The row of a charge just recorded, from the values in hand and the time PostgreSQL gave it:
 * the driver then reads one column of the charge, not twenty-six.
 */
function recordedCharge(scope: Scope, c: NewCharge, createdAt: string): ChargeRow {
  return {
    id: c.id,
    account_id: scope.accountId,
    livemode: scope.livemode,
    source_id: c.source_id,
    customer_id: c.customer_id,
    amount: c.amount,
    amount_authorized: c.amount,
    amount_refunded: 0,
    currency: c.currency,
    description: c.description,
    statement_descriptor: c.statement_descriptor,
    status: 'pending',
    authorized: false,
    captured: false,
    capture: c.capture,
    require_auth: c.require_auth,
    processing: 'authorize',
    action: null,
    action_token: null,
    otp_attempts: 0,
    processor_ref: null,
    failure_data: null,
    metadata: c.metadata as Record<string, unknown>,
    operation_key: null,
    created_at: createdAt,
    updated_at: createdAt,
  }
}

/** A new charge is recorded before the processor is called: pending, with the call under way. */
export async function insertCharge(db: Queryable, scope: Scope, c: NewCharge): Promise<ChargeRow> {
  const res = await db.query<{ created_at: string }>(
    `INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
       description, statement_descriptor, status, capture, require_auth, processing, metadata, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, 'pending', $10, $11, 'authorize', $12::jsonb, $13)
     RETURNING created_at`,
    newChargeParams(scope, c),
  )
  return recordedCharge(scope, c, (res.rows[0] as { created_at: string }).created_at)
}

/**
 * Takes an unused source that belongs to no customer and records the charge on it, in one
 * statement that also answers the source with its ciphertexts for the processor; undefined (and
 * nothing written) when the source is not such a source.
 */
export async function insertChargeTakingFreeSource(
  db: Queryable,
  scope: Scope,
  c: NewCharge,
): Promise<{ charge: ChargeRow; source: SourceRow & SourceSecrets } | undefined> {
  const res = await db.query<Record<string, unknown>>(
    `WITH taken AS (
       UPDATE sources SET used = true, updated_at = now()
       WHERE id = $4 AND account_id = $2 AND livemode = $3 AND used = false AND customer_id IS NULL AND vaulted = false
       RETURNING ${SOURCE_WITH_SECRETS.join(', ')}
     ), charge AS (
       INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
         description, statement_descriptor, status, capture, require_auth, processing, metadata, idempotency_key)
       SELECT $1, $2, $3, taken.id, $5, $6, $6, $7, $8, $9, 'pending', $10, $11, 'authorize', $12::jsonb, $13 FROM taken
       RETURNING created_at
     )
     SELECT charge.created_at AS charge_created_at, ${selectPrefixed('taken', SOURCE_WITH_SECRETS, 's_')}
     FROM charge, taken`,
    newChargeParams(scope, c),
  )
  const row = res.rows[0]
  if (!row) return undefined
  return {
    charge: recordedCharge(scope, c, row.charge_created_at as string),
    source: pick<SourceRow & SourceSecrets>(row, SOURCE_WITH_SECRETS, 's_') as SourceRow & SourceSecrets,
  }
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

/**
 * Claims charges a payer has left waiting longer than `timeoutMs`, one sweeper each: the claim
 * marks an authorization under way, as a payer's answer does, so an answer and the claim never
 * both go through. A claim whose process dies is let go by the recovery sweep.
 */
export async function claimAbandoned(db: Queryable, timeoutMs: number, limit = 20): Promise<ChargeRow[]> {
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET processing = 'authorize', updated_at = now() WHERE id IN (
       SELECT id FROM charges
       WHERE action IS NOT NULL AND status = 'pending' AND processing IS NULL
         AND updated_at < now() - $1 * interval '1 millisecond'
       ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [timeoutMs, limit],
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

/** The columns a charge's view shows, with source_id to find its source. */
const CHARGE_VIEW_NAMES = [
  'id',
  'source_id',
  'amount',
  'amount_refunded',
  'authorized',
  'captured',
  'currency',
  'statement_descriptor',
  'description',
  'require_auth',
  'action',
  'status',
  'livemode',
  'metadata',
  'failure_data',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ChargeRow)[]
const REFUND_VIEW_NAMES = [
  'id',
  'amount',
  'currency',
  'reason',
  'status',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof RefundRow)[]

export type ChargeViewRow = Pick<ChargeRow, (typeof CHARGE_VIEW_NAMES)[number]>
export type RefundViewRow = Pick<RefundRow, (typeof REFUND_VIEW_NAMES)[number]>

/**
 * A page of charges with their sources and refunds, in one statement answering one JSON value.
 * Only the columns the views show: every other one would be turned into JSON by PostgreSQL and
 * parsed again by the service for nothing.
 */
export async function listChargesWithDetails(
  db: Queryable,
  scope: Scope,
  page: PageRequest,
): Promise<Page<{ charge: ChargeViewRow; source: SourceViewRow; refunds: RefundViewRow[] }>> {
  const { where, params } = await pageWhere(db, 'charges', scope, page)
  const res = await db.query<{ page: (ChargeViewRow & { source: SourceViewRow; refunds: RefundViewRow[] })[] }>(
    `SELECT coalesce(json_agg(x ORDER BY x.id DESC), '[]') AS page FROM (
       SELECT ${selectPrefixed('c', CHARGE_VIEW_NAMES, '')},
         (SELECT to_json(s) FROM (SELECT ${selectPrefixed('s', SOURCE_VIEW_NAMES, '')} FROM sources s WHERE s.id = c.source_id) s)
           AS source,
         (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM (
            SELECT ${selectPrefixed('r', REFUND_VIEW_NAMES, '')} FROM refunds r WHERE r.charge_id = c.id) r) AS refunds
       FROM charges c WHERE ${where} ORDER BY c.id DESC LIMIT $3
     ) x`,
    params,
  )
  const rows = (res.rows[0]?.page ?? []).map(({ source, refunds, ...charge }) => ({
    charge: timestampsFromJson(charge, CHARGE_VIEW_NAMES),
    source: timestampsFromJson(source, SOURCE_VIEW_NAMES),
    refunds: refunds.map((r) => timestampsFromJson(r, REFUND_VIEW_NAMES)),
  }))
  return toPage(rows, page.limit)
}

/** The source and refunds of a charge, in one statement. */
export async function detailsOf(db: Queryable, charge: ChargeRow): Promise<ChargeWithDetails> {
  const res = await db.query<Record<string, unknown>>(
    `SELECT ${selectPrefixed('s', SOURCE_NAMES, 's_')}, ${selectPrefixed('r', REFUND_NAMES, 'r_')}
     FROM sources s LEFT JOIN refunds r ON r.charge_id = $2
     WHERE s.id = $1 ORDER BY r.id`,
    [charge.source_id, charge.id],
  )
  const first = res.rows[0]
  if (!first) throw new Error(`the source ${charge.source_id} of ${charge.id} is not stored`)
  return {
    charge,
    source: pick<SourceRow>(first, SOURCE_NAMES, 's_') as SourceRow,
    refunds: res.rows.map((r) => pick<RefundRow>(r, REFUND_NAMES, 'r_')).filter((r) => r !== undefined),
  }
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

/** `column = $n, …` of a patch, its values appended to `params`. */
function patchSets(patch: ChargePatch, params: unknown[]): string {
  const sets: string[] = []
  for (const [column, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (!PATCHABLE.has(column)) throw new Error(`not a patchable charge column: ${column}`)
    params.push(JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value)
    sets.push(`${column} = $${params.length}${JSON_COLUMNS.has(column) ? '::jsonb' : ''}`)
  }
  return sets.join(', ')
}

export async function patchCharge(db: Queryable, id: string, patch: ChargePatch): Promise<ChargeRow> {
  const params: unknown[] = [id]
  const sets = patchSets(patch, params)
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET ${sets}, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    params,
  )
  return res.rows[0] as ChargeRow
}

/** An event to store, with the notify call it queues when its source has a notify address. */
export interface EventToStore {
  id: string
  type: string
  data: object
  delivery?: { id: string; url: string; payload: string } | undefined
}

/**
 * The outcome of an authorization in one statement, so one commit: the source as the processor
 * left it (its security code erased once the authorization is decided), the charge's patch, the
 * event and its notify call. Every value is computed by the caller, the time `at` included, so the
 * event holds exactly the charge the caller answers with.
 */
export async function recordAuthorization(
  db: Queryable,
  scope: Scope,
  o: {
    at: string
    source: { id: string; card: object | null; bankAccount: object | null; eraseCvc: boolean; updatedAt: string }
    charge: { id: string; patch: ChargePatch }
    event: EventToStore
  },
): Promise<void> {
  const { source, event } = o
  const params: unknown[] = [
    source.id,
    source.card === null ? null : JSON.stringify(source.card),
    source.bankAccount === null ? null : JSON.stringify(source.bankAccount),
    source.eraseCvc,
    source.updatedAt,
    o.charge.id,
    o.at,
    scope.accountId,
    scope.livemode,
    event.id,
    event.type,
    JSON.stringify(event.data),
  ]
  // Without a notify call the statement leaves the deliveries table out: PostgreSQL would set up
  // the insert (its indexes and foreign key) in every execution even for no row.
  let delivery = ''
  if (event.delivery) {
    params.push(event.delivery.id, event.delivery.url, event.delivery.payload)
    const n = params.length
    delivery = `, delivery AS (
       INSERT INTO deliveries (id, account_id, livemode, event_id, event_type, url, payload, status, next_attempt_at)
       VALUES ($${n - 2}, $8, $9, $10, $11, $${n - 1}, $${n}, 'pending', now())
     )`
  }
  const sets = patchSets(o.charge.patch, params)
  await db.query(
    `WITH settled AS (
       UPDATE sources SET card = $2::jsonb, bank_account = $3::jsonb,
         card_cvc_enc = CASE WHEN $4 THEN NULL ELSE card_cvc_enc END, updated_at = $5
       WHERE id = $1
     ), event AS (
       INSERT INTO events (id, account_id, livemode, type, charge_id, data, created_at)
       VALUES ($10, $8, $9, $11, $6, $12::jsonb, $7)
     )${delivery}
     UPDATE charges SET ${sets}, updated_at = $7 WHERE id = $6`,
    params,
  )
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
