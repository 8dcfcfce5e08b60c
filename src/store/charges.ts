import type { ChargeStatus } from '../domain/charge-state.js'
import { sharedStatement } from './batch.js'
import type { Queryable } from './db.js'
import { timestampsFromJson } from './joined.js'
import type { Scope } from './scope.js'
import { SOURCE_COLUMNS, type SourceWithCard } from './sources.js'

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
  redirect_url: string | null
  idempotency_key: string | null
}

/** What `insertCharge` found: the source as it was, and the charge when the source could be taken. */
export interface ChargeInsertion {
  /** undefined when the scope has no such source */
  source?: SourceWithCard | undefined
  charge?: ChargeRow | undefined
}

interface ChargeAsked {
  scope: Scope
  charge: NewCharge
}

/**
 * New charges on the sources they take, in one statement shared by concurrent creates
 * (store/batch.ts), never two on one source. The sources are locked in the order of their ids, so
 * two such statements wait for each other rather than deadlock.
 */
const insertCharges = sharedStatement(
  async (db, items: ChargeAsked[]): Promise<ChargeInsertion[]> => {
    const col = <T>(f: (i: ChargeAsked) => T) => items.map(f)
    const res = await db.query<{
      source: SourceWithCard | null
      charge: ChargeRow | null
      consumed_at: string | null
    }>(
      `WITH v AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::bigint[], $7::text[],
           $8::text[], $9::text[], $10::boolean[], $11::boolean[], $12::text[], $13::text[], $14::text[]) WITH ORDINALITY
           AS v (id, account_id, livemode, source_id, customer_id, amount, currency, description, statement_descriptor,
             capture, require_auth, metadata, idempotency_key, redirect_url, n)
       ), source AS (
         SELECT ${SOURCE_COLUMNS.map((c) => `s.${c}`).join(', ')}, s.card_number_enc, s.card_cvc_enc
         FROM v JOIN sources s ON s.id = v.source_id AND s.account_id = v.account_id AND s.livemode = v.livemode
         ORDER BY s.id FOR UPDATE OF s
       ), usable AS (
         SELECT v.id AS charge_id, source.id, source.vaulted FROM v JOIN source ON source.id = v.source_id
         WHERE source.customer_id IS NOT DISTINCT FROM v.customer_id AND (source.vaulted OR NOT source.used)
       ), consumed AS (
         UPDATE sources s SET used = true, updated_at = now() FROM usable
         WHERE s.id = usable.id AND NOT usable.vaulted
         RETURNING s.id, s.updated_at
       ), charge AS (
         INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
           description, statement_descriptor, status, capture, require_auth, processing, metadata, idempotency_key,
           redirect_url)
         SELECT v.id, v.account_id, v.livemode, v.source_id, v.customer_id, v.amount, v.amount, v.currency,
           v.description, v.statement_descriptor, 'pending', v.capture, v.require_auth, 'authorize', v.metadata::json,
           v.idempotency_key, v.redirect_url
         FROM v JOIN usable ON usable.charge_id = v.id
         RETURNING ${SELECT}
       )
       SELECT (SELECT to_json(s) FROM source s WHERE s.id = v.source_id) AS source,
         (SELECT to_json(c) FROM charge c WHERE c.id = v.id) AS charge,
         (SELECT updated_at FROM consumed WHERE consumed.id = v.source_id) AS consumed_at
       FROM v ORDER BY v.n`,
      [
        col((i) => i.charge.id),
        col((i) => i.scope.accountId),
        col((i) => i.scope.livemode),
        col((i) => i.charge.source_id),
        col((i) => i.charge.customer_id),
        col((i) => i.charge.amount),
        col((i) => i.charge.currency),
        col((i) => i.charge.description),
        col((i) => i.charge.statement_descriptor),
        col((i) => i.charge.capture),
        col((i) => i.charge.require_auth),
        col((i) => param('metadata', i.charge.metadata)),
        col((i) => i.charge.idempotency_key),
        col((i) => i.charge.redirect_url),
      ],
    )
    return res.rows.map((found) => {
      if (!found.source) return {}
      const source = timestampsFromJson(found.source, SOURCE_COLUMNS)
      if (!found.charge) return { source }
      const consumed = found.consumed_at ? { used: true, updated_at: found.consumed_at } : {}
      return { source: { ...source, ...consumed }, charge: timestampsFromJson(found.charge, CHARGE_COLUMNS) }
    })
  },
  { key: (i) => i.charge.source_id },
)

/**
 * Records a new charge on the source it takes, in one statement, before the processor is called:
 * pending, with the authorization under way. The source is read with its card data and locked
 * (a detach, an attach or another charge of it waits, or is waited for), and taken when it belongs
 * to the charge's customer (to no customer, for a charge without one) and, if single-use, is
 * unused: it is then consumed. Answers the source as it was found, with the charge when it was
 * taken; the caller explains a source not taken.
 */
export function insertCharge(db: Queryable, scope: Scope, c: NewCharge): Promise<ChargeInsertion> {
  return insertCharges(db, { scope, charge: c })
}

/** With `lock`, the row stays locked until the transaction ends. */
export async function getCharge(db: Queryable, scope: Scope, id: string, lock = false): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(
    `SELECT ${SELECT} FROM charges WHERE id = $1 AND account_id = $2 AND livemode = $3${lock ? ' FOR UPDATE' : ''}`,
    [id, scope.accountId, scope.livemode],
  )
  return res.rows[0]
}

/** For the hosted page, which the payer reaches with a token, not a key, and for the recovery sweep. */
export async function getChargeById(db: Queryable, id: string): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(`SELECT ${SELECT} FROM charges WHERE id = $1`, [id])
  return res.rows[0]
}

/** The charge a create request with this Idempotency-Key made, if its first attempt got that far. */
export async function getChargeByKey(db: Queryable, scope: Scope, key: string): Promise<ChargeRow | undefined> {
  const res = await db.query<ChargeRow>(
    `SELECT ${SELECT} FROM charges WHERE account_id = $1 AND livemode = $2 AND idempotency_key = $3
     AND created_at > account_now($1, $2) - interval '24 hours' ORDER BY id DESC LIMIT 1`,
    [scope.accountId, scope.livemode, key],
  )
  return res.rows[0]
}

/** `column = $n, …` of a patch, its values appended to `params`. */
function patchSets(patch: ChargePatch, params: unknown[]): string[] {
  const sets: string[] = []
  for (const [column, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (!CHANGEABLE.has(column)) throw new Error(`not a column an outcome may change: ${column}`)
    params.push(param(column, value))
    sets.push(`${column} = $${params.length}${JSON_COLUMNS.has(column) ? '::json' : ''}`)
  }
  return sets
}

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
  return CHANGING.map((column) => {
    const type = CHANGING_TYPES[column]
    const value =
      type === 'json' ? `nullif(${patch} -> '${column}', 'null'::jsonb)::json` : `(${patch} ->> '${column}')::${type}`
    return `${column} = CASE WHEN ${patch} ? '${column}' THEN ${value} ELSE ${alias}.${column} END`
  })
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

export async function patchCharge(db: Queryable, id: string, patch: ChargePatch): Promise<ChargeRow> {
  const params: unknown[] = [id]
  const sets = patchSets(patch, params)
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${SELECT}`,
    params,
  )
  return res.rows[0] as ChargeRow
}

/**
 * Claims charges whose operation has been under way longer than `graceMs` (its process died),
 * one sweeper each: the claim pushes updated_at on, so others pass them by for another grace.
 */
export async function claimInterrupted(db: Queryable, graceMs: number, limit = 20): Promise<ChargeRow[]> {
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET updated_at = now() WHERE id IN (
       SELECT id FROM charges WHERE processing IS NOT NULL
         AND updated_at < account_now(account_id, livemode) - $1 * interval '1 millisecond'
       ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING ${SELECT}`,
    [graceMs, limit],
  )
  return res.rows
}

/**
 * Claims charges a payer has left waiting longer than `timeoutMs` by their account's time
 * (account_now: its test clock, in test mode), one sweeper each: the claim marks an authorization under way, as a payer's answer does, so an answer and the claim never
 * both go through. A claim whose process dies is let go by the recovery sweep.
 */
export async function claimAbandoned(db: Queryable, timeoutMs: number, limit = 20): Promise<ChargeRow[]> {
  const res = await db.query<ChargeRow>(
    `UPDATE charges SET processing = 'authorize', updated_at = now() WHERE id IN (
       SELECT id FROM charges
       WHERE action IS NOT NULL AND status = 'pending' AND processing IS NULL
         AND updated_at < account_now(account_id, livemode) - $1 * interval '1 millisecond'
       ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING ${SELECT}`,
    [timeoutMs, limit],
  )
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
