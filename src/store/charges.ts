import type { ChargeStatus } from '../domain/charge-state.js'
import type { Queryable } from './db.js'
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
  /**
   * when the operation under way began (the real time), or was last claimed by the recovery sweep:
   * it names that run of the operation, whose outcome is recorded only while it still holds
   */
  processing_since: string | null
  action: Record<string, unknown> | null
  action_token: string | null
  otp_attempts: number
  processor_ref: string | null
  failure_data: Record<string, unknown> | null
  metadata: Record<string, unknown>
  /** where the payer returns after a payer step when the source has no redirect */
  redirect_url: string | null
  operation_key: string | null
  created_at: string
  updated_at: string
}

/**
 * The columns of a charge's row, named here only: every statement of this file reads these, and
 * CHANGING lists the ones an outcome may set.
 */
export const CHARGE_COLUMNS = [
  'id',
  'account_id',
  'livemode',
  'source_id',
  'customer_id',
  'amount',
  'amount_authorized',
  'amount_refunded',
  'currency',
  'description',
  'statement_descriptor',
  'status',
  'authorized',
  'captured',
  'capture',
  'require_auth',
  'processing',
  'processing_since',
  'action',
  'action_token',
  'otp_attempts',
  'processor_ref',
  'failure_data',
  'metadata',
  'redirect_url',
  'operation_key',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ChargeRow)[]

// every field of ChargeRow is a listed column
const _everyColumnListed: Exclude<keyof ChargeRow, (typeof CHARGE_COLUMNS)[number]> extends never ? true : never = true
void _everyColumnListed

const SELECT = CHARGE_COLUMNS.join(', ')

/** The columns an operation's outcome may change; the others are fixed when the charge is made. */
const CHANGING = [
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
] as const satisfies readonly (typeof CHARGE_COLUMNS)[number][]

export type ChargePatch = Partial<Pick<ChargeRow, (typeof CHANGING)[number]>>

const CHANGEABLE = new Set<string>(CHANGING)
const JSON_COLUMNS = new Set<string>(['action', 'failure_data', 'metadata'])

/** A column's value as a parameter: the objects of json columns as their text. */
const param = (column: string, value: unknown) =>
  JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value

const CHARGE_BY_ID = `SELECT ${SELECT} FROM charges WHERE id = $1 AND account_id = $2 AND livemode = $3`
const CHARGE_BY_ID_LOCKED = `${CHARGE_BY_ID} FOR UPDATE`

/** With `lock`, the row stays locked until the transaction ends. */
export async function getCharge(db: Queryable, scope: Scope, id: string, lock = false): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(lock ? CHARGE_BY_ID_LOCKED : CHARGE_BY_ID, [
    id,
    scope.accountId,
    scope.livemode,
  ])
  return res.rows[0]
}

const ANY_CHARGE_BY_ID = `SELECT ${SELECT} FROM charges WHERE id = $1`

/** For the hosted page, which the payer reaches with a token, not a key, and for the recovery sweep. */
export async function getChargeById(db: Queryable, id: string): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(ANY_CHARGE_BY_ID, [id])
  return res.rows[0]
}

const CHARGE_BY_KEY = `SELECT ${SELECT} FROM charges WHERE account_id = $1 AND livemode = $2 AND idempotency_key = $3
   ORDER BY id DESC LIMIT 1`

/** The charge a create request with this Idempotency-Key made, if its first attempt got that far. */
export async function getChargeByKey(db: Queryable, scope: Scope, key: string): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(CHARGE_BY_KEY, [scope.accountId, scope.livemode, key])
  return res.rows[0]
}

/** Columns no view of the charge shows: changing only these is no change a client can see. */
const BOOKKEEPING = new Set<string>(['processing', 'operation_key', 'otp_attempts'])

/**
 * `column = $n, …` of a patch, its values appended to `params`, and `updated_at` moved on when the
 * patch changes what a client sees: an operation begun or let go, or a wrong OTP, leaves it, so it
 * stays the time of the change the charge's last event told, and a payer's time to answer runs
 * from it.
 */
function patchSets(patch: ChargePatch, params: unknown[]): string[] {
  const sets: string[] = []
  let seen = false
  for (const [column, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (!CHANGEABLE.has(column)) throw new Error(`not a column an outcome may change: ${column}`)
    params.push(param(column, value))
    sets.push(`${column} = $${params.length}${JSON_COLUMNS.has(column) ? '::json' : ''}`)
    if (column === 'processing') sets.push(`processing_since = ${processingSince(`$${params.length}::text`)}`)
    if (!BOOKKEEPING.has(column)) seen = true
  }
  return seen ? [...sets, 'updated_at = now()'] : sets
}

/** When an operation set to `processing` began: now, by the real time; none when it is cleared. */
const processingSince = (processing: string) => `CASE WHEN ${processing} IS NULL THEN NULL ELSE now() END`

/** Each changeable column's type, for a patch sent as JSON. */
const CHANGING_TYPES: Record<(typeof CHANGING)[number], string> = {
  amount: 'bigint',
  amount_refunded: 'bigint',
  status: 'text',
  authorized: 'boolean',
  captured: 'boolean',
  processing: 'text',
  action: 'json',
  action_token: 'text',
  otp_attempts: 'integer',
  processor_ref: 'text',
  failure_data: 'json',
  operation_key: 'text',
}

/**
 * `column = …, …` setting, on the charge `alias`, each column a patch sent as a JSON object
 * (`patch`, jsonb) names, and keeping the others: one statement text for any patch, as a statement
 * over the rows of many patches needs.
 */
export function patchSetsFromJson(alias: string, patch: string): string[] {
  const sets = CHANGING.map((column) => {
    const type = CHANGING_TYPES[column]
    const value =
      type === 'json' ? `nullif(${patch} -> '${column}', 'null'::jsonb)::json` : `(${patch} ->> '${column}')::${type}`
    return `${column} = CASE WHEN ${patch} ? '${column}' THEN ${value} ELSE ${alias}.${column} END`
  })
  const since = processingSince(`${patch} ->> 'processing'`)
  return [
    ...sets,
    `processing_since = CASE WHEN ${patch} ? 'processing' THEN ${since} ELSE ${alias}.processing_since END`,
  ]
}

/** A patch as `patchSetsFromJson` reads it: its columns that are set, as one JSON object. */
export function patchJson(patch: ChargePatch): string {
  const set: Record<string, unknown> = {}
  for (const [column, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (!CHANGEABLE.has(column)) throw new Error(`not a column an outcome may change: ${column}`)
    set[column] = value
  }
  return JSON.stringify(set)
}

/** A charge changed by `patch`, when `guard` (a condition on `$2`, its value) holds of it; else undefined. */
async function patchChargeWhere(
  db: Queryable,
  id: string,
  patch: ChargePatch,
  guard?: { condition: string; value: unknown },
): Promise<ChargeRow | undefined> {
  const params: unknown[] = guard ? [id, guard.value] : [id]
  const sets = patchSets(patch, params)
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET ${sets.join(', ')} WHERE id = $1${guard ? ` AND ${guard.condition}` : ''} RETURNING ${SELECT}`,
    params,
  )
  return res.rows[0]
}

export async function patchCharge(db: Queryable, id: string, patch: ChargePatch): Promise<ChargeRow> {
  return (await patchChargeWhere(db, id, patch)) as ChargeRow
}

/**
 * Changes a charge within the run of its operation that `held` was read in, and answers undefined
 * once that run no longer holds it: an operation that outlasted the recovery grace may have been
 * claimed by the sweep and run again, or resumed by a retry with its Idempotency-Key. Whichever run
 * ends it first records its outcome; the others answer the charge as that one left it.
 */
export function patchHeldCharge(
  db: Queryable,
  held: Pick<ChargeRow, 'id' | 'processing_since'>,
  patch: ChargePatch,
): Promise<ChargeRow | undefined> {
  return patchChargeWhere(db, held.id, patch, {
    condition: 'processing_since = $2::timestamptz',
    value: held.processing_since,
  })
}

/**
 * Records the outcome of the operation `held` was read with, by whichever run of it the processor
 * answered: while that operation is still under way, whether or not this run still holds it (the
 * sweep may have claimed it and sent it again; the processor's answer to either is the answer to
 * both). Undefined once another run has ended it.
 */
export function patchOperationUnderWay(
  db: Queryable,
  held: Pick<ChargeRow, 'id' | 'processing'>,
  patch: ChargePatch,
): Promise<ChargeRow | undefined> {
  return patchChargeWhere(db, held.id, patch, { condition: 'processing = $2', value: held.processing })
}

const CLAIM_INTERRUPTED = `UPDATE charges SET processing_since = now() WHERE id IN (
     SELECT id FROM charges WHERE processing IS NOT NULL
       AND processing_since < now() - $1 * interval '1 millisecond'
     ORDER BY processing_since LIMIT $2 FOR UPDATE SKIP LOCKED)
   RETURNING ${SELECT}`

/**
 * Claims charges whose operation has been under way longer than `graceMs` by the real time (its
 * process died), one sweeper each: the claim begins the operation again, so others pass them by
 * for another grace. The real time, not the account's: a test clock moved on says nothing of a
 * process still at work, whose operation would then be run twice.
 */
export async function claimInterrupted(db: Queryable, graceMs: number, limit = 20): Promise<ChargeRow[]> {
  const res = await db.query<ChargeRow>(CLAIM_INTERRUPTED, [graceMs, limit])
  return res.rows
}

const CLAIM_ABANDONED = `UPDATE charges SET processing = 'authorize', processing_since = now() WHERE id IN (
     SELECT id FROM charges
     WHERE action IS NOT NULL AND status = 'pending' AND processing IS NULL
       AND updated_at < account_now(account_id, livemode) - $1 * interval '1 millisecond'
     ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
   RETURNING ${SELECT}`

/**
 * Claims charges a payer has left waiting longer than `timeoutMs` by their account's time
 * (account_now: its test clock, in test mode), one sweeper each: the claim marks an authorization under way, as a payer's answer does, so an answer and the claim never
 * both go through. A claim whose process dies is let go by the recovery sweep.
 */
export async function claimAbandoned(db: Queryable, timeoutMs: number, limit = 20): Promise<ChargeRow[]> {
  const res = await db.query<ChargeRow>(CLAIM_ABANDONED, [timeoutMs, limit])
  return res.rows
}

/**
 * Claims charges whose reversal was last asked for over `graceMs` ago, one sweeper each, and marks
 * it asked again. Only the claim's own column changes: the API shows nothing of a reversal.
 */
export async function claimReversalsOwed(
  db: Queryable,
  graceMs: number,
  limit = 20,
): Promise<Pick<ChargeRow, 'id' | 'account_id' | 'livemode'>[]> {
  const res = await db.query<Pick<ChargeRow, 'id' | 'account_id' | 'livemode'>>(
    `UPDATE charges SET reversal_asked_at = now() WHERE id IN (
       SELECT id FROM charges
       WHERE reversal_asked_at IS NOT NULL AND reversal_asked_at < now() - $1 * interval '1 millisecond'
       ORDER BY reversal_asked_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id, account_id, livemode`,
    [graceMs, limit],
  )
  return res.rows
}

/** The processor confirmed that nothing is held for the charge: no reversal is owed any more. */
export async function settleReversal(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE charges SET reversal_asked_at = NULL WHERE id = $1', [id])
}
