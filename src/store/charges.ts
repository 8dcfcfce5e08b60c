import type { ChargeStatus } from '../domain/charge-state.js'
import type { Queryable } from './db.js'
import { columnNames, pick, selectPrefixed, timestampsFromJson } from './joined.js'
import { type Page, type PageRequest, toPage } from './list.js'
import { ParamRows } from './param-rows.js'
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

/**
 * The columns a new charge is recorded with, from the values in hand, in the order of the
 * insert's parameters ($1 … $13 of insertCharge).
 */
function newChargeColumns(scope: Scope, c: NewCharge) {
  return {
    id: c.id,
    account_id: scope.accountId,
    livemode: scope.livemode,
    source_id: c.source_id,
    customer_id: c.customer_id,
    amount: c.amount,
    currency: c.currency,
    description: c.description,
    statement_descriptor: c.statement_descriptor,
    capture: c.capture,
    require_auth: c.require_auth,
    metadata: c.metadata,
    idempotency_key: c.idempotency_key,
  }
}

const NEW_CHARGE_COLUMNS = [
  ['id', 'text'],
  ['account_id', 'text'],
  ['livemode', 'boolean'],
  ['source_id', 'text'],
  ['customer_id', 'text'],
  ['amount', 'bigint'],
  ['currency', 'text'],
  ['description', 'text'],
  ['statement_descriptor', 'text'],
  ['capture', 'boolean'],
  ['require_auth', 'boolean'],
  ['metadata', 'json'],
  ['idempotency_key', 'text'],
] as const

const NEW_CHARGES = new ParamRows<ReturnType<typeof newChargeColumns>>(NEW_CHARGE_COLUMNS)

/**
 * The row of a new charge, pending with its authorization under way, from the values in hand and
 * its creation time (for one just recorded, the time PostgreSQL gave it: the driver then reads one
 * column of the charge, not twenty-six).
 */
export function recordedCharge(scope: Scope, c: NewCharge, createdAt: string): ChargeRow {
  // Object.assign, not a spread: a spread followed by new keys cost Node 20 about 800 ns a key
  // (12 µs here, 9% of a charge's CPU), assigning them to the new object 0.3 µs in all
  return Object.assign(newChargeColumns(scope, c), {
    amount_authorized: c.amount,
    amount_refunded: 0,
    status: 'pending' as const,
    authorized: false,
    captured: false,
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
  })
}

/** A new charge is recorded before the processor is called: pending, with the call under way. */
export async function insertCharge(db: Queryable, scope: Scope, c: NewCharge): Promise<ChargeRow> {
  const res = await db.query<{ created_at: string }>(
    `INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
       description, statement_descriptor, status, capture, require_auth, processing, metadata, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, 'pending', $10, $11, 'authorize', $12::json, $13)
     RETURNING created_at`,
    Object.values({ ...newChargeColumns(scope, c), metadata: JSON.stringify(c.metadata) }),
  )
  return recordedCharge(scope, c, (res.rows[0] as { created_at: string }).created_at)
}

/**
 * Takes unused sources that belong to no customer and records a charge on each, for a batch of
 * new charges (store/batch.ts), in one statement that also answers each source with its
 * ciphertexts for the processor. Answers per charge, in order, undefined when its source was not
 * such a source (nothing written for it). Of two charges of one batch on one source, one takes it.
 */
export async function insertChargesTakingFreeSources(
  db: Queryable,
  items: readonly { scope: Scope; charge: NewCharge }[],
): Promise<({ charge: ChargeRow; source: SourceRow & SourceSecrets } | undefined)[]> {
  const rows = items.map(({ scope, charge }) => newChargeColumns(scope, charge))
  const sql = NEW_CHARGES.statement(
    rows.length,
    (batch, next) => `WITH v AS ${batch}, taken AS (
       UPDATE sources s SET used = true, updated_at = now()
       FROM v
       WHERE s.id = ANY($${next}::text[]) AND s.id = v.source_id AND s.account_id = v.account_id
         AND s.livemode = v.livemode AND s.used = false AND s.customer_id IS NULL AND s.vaulted = false
       RETURNING v.id AS charge_id, ${selectPrefixed('s', SOURCE_WITH_SECRETS, 's_')}
     ), charge AS (
       INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
         description, statement_descriptor, status, capture, require_auth, processing, metadata, idempotency_key)
       SELECT v.id, v.account_id, v.livemode, v.source_id, v.customer_id, v.amount, v.amount, v.currency,
         v.description, v.statement_descriptor, 'pending', v.capture, v.require_auth, 'authorize', v.metadata,
         v.idempotency_key
       FROM v JOIN taken ON taken.charge_id = v.id
     )
     SELECT now() AS at, taken.* FROM taken`,
  )
  const res = await db.query<Record<string, unknown>>(
    sql,
    [...NEW_CHARGES.values(rows), items.map((i) => i.charge.source_id)],
    { batch: true },
  )
  const taken = new Map(res.rows.map((r) => [r.charge_id as string, r]))
  return items.map(({ scope, charge }) => {
    const row = taken.get(charge.id)
    if (!row) return undefined
    return {
      // the charge's default time: the transaction's, as the source's
      charge: recordedCharge(scope, charge, row.at as string),
      source: pick<SourceRow & SourceSecrets>(row, SOURCE_WITH_SECRETS, 's_') as SourceRow & SourceSecrets,
    }
  })
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

/**
 * Claims refunds pending longer than `graceMs`, one sweeper each. The charge is locked with its
 * refund, first, as the refund operations lock them: the claim writes the charge's row too
 * (migration 010), and taking the two in the other order could deadlock with a refund settling.
 */
export async function claimPendingRefunds(db: Queryable, graceMs: number, limit = 20): Promise<RefundRow[]> {
  const res = await db.query<RefundRow>(
    `UPDATE refunds SET updated_at = now() WHERE id IN (
       SELECT r.id FROM refunds r JOIN charges c ON c.id = r.charge_id
       WHERE r.status = 'pending' AND r.updated_at < now() - $1 * interval '1 millisecond'
       ORDER BY r.updated_at LIMIT $2 FOR UPDATE OF c, r SKIP LOCKED)
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
 * What tells a rendered charge from a stale one: the row versions (`xmin`) of the charge and its
 * source. A refund's writes write its charge's row too (migration 010), so the refunds need no
 * version of their own.
 */
export interface ChargeVersion {
  id: string
  version: string
}

export const versionOf = (chargeXmin: unknown, sourceXmin: unknown) => `${chargeXmin}.${sourceXmin}`

/**
 * Pages of charges, newest first, as their ids and versions, for a batch of list requests
 * (store/batch.ts), each with its own scope, cursor and size, in one statement: per page an index
 * walk and a key lookup per charge. Undefined for a page whose cursor names no charge of its scope.
 */
export async function listChargeVersions(
  db: Queryable,
  items: readonly { scope: Scope; page: PageRequest }[],
): Promise<(Page<ChargeVersion> | undefined)[]> {
  // Identical requests of one batch (the same page of the same account and mode, asked at once)
  // are read once: the statement carries each distinct request, and each caller gets its copy.
  const distinct = new Map<string, number>()
  const requests: { n: number; account_id: string; livemode: boolean; start_after: string | null; rows: number }[] = []
  const requestOf = items.map(({ scope, page }) => {
    const start = page.startAfter ?? null
    const key = `${scope.accountId} ${scope.livemode} ${start} ${page.limit}`
    let n = distinct.get(key)
    if (n === undefined) {
      n = requests.length
      distinct.set(key, n)
      // one more row than asked tells whether there are more
      requests.push({
        n,
        account_id: scope.accountId,
        livemode: scope.livemode,
        start_after: start,
        rows: page.limit + 1,
      })
    }
    return n
  })
  // A page with a cursor and one without walk the index from different bounds; each branch is
  // gated on its own case, so the walk always starts at its bound. The requests go as one JSON
  // document, not as parameters (store/param-rows.ts): the embedded store plans each execution,
  // and with a lone request's values folded into its plan and no statistics yet, PostgreSQL sorted
  // the account's charges instead of walking the index (test/store-maintenance.test.ts).
  const res = await db.query<{ n: number; cursor_ok: boolean; id: string | null; cv: unknown; sv: unknown }>(
    `SELECT r.n, r.cursor_ok, c.id, c.cv, (SELECT s.xmin FROM sources s WHERE s.id = c.source_id) AS sv
     FROM (
       SELECT r.*, (r.start_after IS NULL OR (
           SELECT true FROM charges x WHERE x.id = r.start_after AND x.account_id = r.account_id AND x.livemode = r.livemode
         ) IS NOT NULL) AS cursor_ok
       FROM jsonb_to_recordset($1::jsonb) AS r(n integer, account_id text, livemode boolean, start_after text,
         rows integer)
     ) r
     LEFT JOIN LATERAL (
       (SELECT c.id, c.xmin AS cv, c.source_id FROM charges c
        WHERE r.start_after IS NULL AND c.account_id = r.account_id AND c.livemode = r.livemode
        ORDER BY c.id DESC LIMIT r.rows)
       UNION ALL
       (SELECT c.id, c.xmin AS cv, c.source_id FROM charges c
        WHERE r.cursor_ok AND r.start_after IS NOT NULL AND c.account_id = r.account_id AND c.livemode = r.livemode
          AND c.id < r.start_after
        ORDER BY c.id DESC LIMIT r.rows)
     ) c ON true
     ORDER BY r.n, c.id DESC`,
    [JSON.stringify(requests)],
    { batch: true },
  )
  const pages = requests.map(() => ({ ok: true, rows: [] as ChargeVersion[] }))
  for (const r of res.rows) {
    const page = pages[r.n] as { ok: boolean; rows: ChargeVersion[] }
    page.ok = r.cursor_ok
    if (r.id !== null) page.rows.push({ id: r.id, version: versionOf(r.cv, r.sv) })
  }
  return items.map(({ page: asked }, i) => {
    const page = pages[requestOf[i] as number] as { ok: boolean; rows: ChargeVersion[] }
    return page.ok ? toPage([...page.rows], asked.limit) : undefined
  })
}

export interface ChargeDetailsView {
  version: string
  charge: ChargeViewRow
  source: SourceViewRow
  refunds: RefundViewRow[]
}

/**
 * Charges of the caller's with their sources and refunds, each with its version, in one statement
 * answering one JSON value (in no particular order). Only the columns the views show: every other
 * one would be turned into JSON by PostgreSQL and parsed again by the service for nothing.
 */
export async function chargesWithDetails(
  db: Queryable,
  scope: Scope,
  ids: readonly string[],
): Promise<ChargeDetailsView[]> {
  const res = await db.query<{
    page: (ChargeViewRow & { cv: unknown; source: SourceViewRow & { sv?: unknown }; refunds: RefundViewRow[] })[]
  }>(
    `SELECT coalesce(json_agg(x), '[]') AS page FROM (
       SELECT c.xmin AS cv, ${selectPrefixed('c', CHARGE_VIEW_NAMES, '')},
         (SELECT to_json(s) FROM (
            SELECT s.xmin AS sv, ${selectPrefixed('s', SOURCE_VIEW_NAMES, '')} FROM sources s WHERE s.id = c.source_id) s)
           AS source,
         (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM (
            SELECT ${selectPrefixed('r', REFUND_VIEW_NAMES, '')} FROM refunds r WHERE r.charge_id = c.id) r) AS refunds
       FROM charges c WHERE c.id = ANY($1::text[]) AND c.account_id = $2 AND c.livemode = $3
     ) x`,
    [ids, scope.accountId, scope.livemode],
  )
  return (res.rows[0]?.page ?? []).map(({ cv, source: { sv, ...source }, refunds, ...charge }) => ({
    version: versionOf(cv, sv),
    charge: timestampsFromJson(charge, CHARGE_VIEW_NAMES),
    source: timestampsFromJson(source, SOURCE_VIEW_NAMES),
    refunds: refunds.map((r) => timestampsFromJson(r, REFUND_VIEW_NAMES)),
  }))
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
    sets.push(`${column} = $${params.length}${JSON_COLUMNS.has(column) ? '::json' : ''}`)
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

/** An event to store, with the notify call it queues when its source has a notify address. */
export interface EventToStore {
  id: string
  type: string
  data: object
  delivery?: { id: string; url: string; payload: string } | undefined
}

/** The source as an authorization left it: its card's check, a linked bank account, its security code erased. */
export interface SettledSource {
  id: string
  card: object | null
  bankAccount: object | null
  eraseCvc: boolean
  updatedAt: string
}

/** What an authorization's outcome sets on its charge. */
export type DecidedCharge = Pick<
  ChargeRow,
  | 'id'
  | 'status'
  | 'authorized'
  | 'captured'
  | 'action'
  | 'action_token'
  | 'processor_ref'
  | 'failure_data'
  | 'otp_attempts'
  | 'updated_at'
>

export interface AuthorizationOutcome {
  scope: Scope
  source: SettledSource
  /** the charge as decided, worked out from the row in hand: an operation under way held it */
  charge: DecidedCharge
  /** made at the charge's `updated_at` */
  event: EventToStore
  /** the processor gave no answer and may have authorized all the same: a reversal is owed */
  reversalOwed: boolean
}

/** An outcome's values, one row of a batch (OUTCOMES). */
function outcomeRow(i: AuthorizationOutcome) {
  return {
    id: i.charge.id,
    source_id: i.source.id,
    card: i.source.card,
    bank_account: i.source.bankAccount,
    erase_cvc: i.source.eraseCvc,
    source_updated_at: i.source.updatedAt,
    status: i.charge.status,
    authorized: i.charge.authorized,
    captured: i.charge.captured,
    action: i.charge.action,
    action_token: i.charge.action_token,
    processor_ref: i.charge.processor_ref,
    failure_data: i.charge.failure_data,
    otp_attempts: i.charge.otp_attempts,
    reversal_owed: i.reversalOwed,
    at: i.charge.updated_at,
    account_id: i.scope.accountId,
    livemode: i.scope.livemode,
    event_id: i.event.id,
    event_type: i.event.type,
    event_data: i.event.data,
    delivery_id: i.event.delivery?.id ?? null,
    url: i.event.delivery?.url ?? null,
    payload: i.event.delivery?.payload ?? null,
  }
}

const OUTCOME_COLUMNS = [
  ['id', 'text'],
  ['source_id', 'text'],
  ['card', 'json'],
  ['bank_account', 'json'],
  ['erase_cvc', 'boolean'],
  ['source_updated_at', 'timestamptz'],
  ['status', 'text'],
  ['authorized', 'boolean'],
  ['captured', 'boolean'],
  ['action', 'json'],
  ['action_token', 'text'],
  ['processor_ref', 'text'],
  ['failure_data', 'json'],
  ['otp_attempts', 'integer'],
  ['reversal_owed', 'boolean'],
  ['at', 'timestamptz'],
  ['account_id', 'text'],
  ['livemode', 'boolean'],
  ['event_id', 'text'],
  ['event_type', 'text'],
  ['event_data', 'json'],
  ['delivery_id', 'text'],
  ['url', 'text'],
  ['payload', 'text'],
] as const

const OUTCOMES = new ParamRows<ReturnType<typeof outcomeRow>>(OUTCOME_COLUMNS)

/** The source as the processor left it; its security code erased once the authorization is decided. */
const SETTLE_SOURCE = `card = v.card, bank_account = v.bank_account,
  card_cvc_enc = CASE WHEN v.erase_cvc THEN NULL ELSE s.card_cvc_enc END, updated_at = v.source_updated_at`

/**
 * The statement's parts that store each outcome's event and its notify call, for the rows of
 * `rows` (`v`, or only those of its rows that were written, named `v`). Without a notify call in
 * the batch they leave the deliveries table out: PostgreSQL would set up the insert (its indexes
 * and foreign key) in every execution even for no row.
 */
function eventsWithNotifyCalls(rows: string, notify: boolean): string {
  const event = `event AS (
       INSERT INTO events (id, account_id, livemode, type, charge_id, data, created_at)
       SELECT v.event_id, v.account_id, v.livemode, v.event_type, v.id, v.event_data, v.at FROM ${rows}
     )`
  if (!notify) return event
  return `${event}, delivery AS (
       INSERT INTO deliveries (id, account_id, livemode, event_id, event_type, url, payload, status, next_attempt_at)
       SELECT v.delivery_id, v.account_id, v.livemode, v.event_id, v.event_type, v.url, v.payload, 'pending', now()
       FROM ${rows} WHERE v.delivery_id IS NOT NULL
     )`
}

/**
 * The outcomes of authorizations, for a batch (store/batch.ts), in one statement and so one
 * commit: each source as the processor left it, each charge as decided with its operation done,
 * each event and its notify call. Every value is computed by the caller, so each event holds
 * exactly the charge its caller answers with.
 */
export async function recordAuthorizations(db: Queryable, items: readonly AuthorizationOutcome[]): Promise<void> {
  const notify = items.some((i) => i.event.delivery)
  const sql = OUTCOMES.statement(
    items.length,
    (batch, next) => `WITH v AS ${batch}, settled AS (
       UPDATE sources s SET ${SETTLE_SOURCE}
       FROM v WHERE s.id = ANY($${next}::text[]) AND s.id = v.source_id
     ), ${eventsWithNotifyCalls('v', notify)}
     UPDATE charges c SET status = v.status, authorized = v.authorized, captured = v.captured, processing = NULL,
       action = v.action, action_token = v.action_token, processor_ref = v.processor_ref,
       failure_data = v.failure_data, otp_attempts = v.otp_attempts, updated_at = v.at,
       reversal_asked_at = CASE WHEN v.reversal_owed THEN now() ELSE c.reversal_asked_at END
     FROM v WHERE c.id = ANY($${next + 1}::text[]) AND c.id = v.id`,
    notify ? 'notify' : '',
  )
  await db.query(
    sql,
    [...OUTCOMES.values(items.map(outcomeRow)), items.map((i) => i.source.id), items.map((i) => i.charge.id)],
    { batch: true },
  )
}

const DECIDED_CHARGES = new ParamRows<
  ReturnType<typeof outcomeRow> & ReturnType<typeof newChargeColumns> & { created_at: string }
>([
  ...OUTCOME_COLUMNS,
  ...NEW_CHARGE_COLUMNS.filter(([name]) => !OUTCOME_COLUMNS.some(([outcome]) => outcome === name)),
  ['created_at', 'timestamptz'],
])

/** A charge decided before it was recorded: as asked for, when, and the outcome. */
export interface DecidedNewCharge extends AuthorizationOutcome {
  asked: NewCharge
  createdAt: string
}

/**
 * Charges decided before they were recorded (a processor that decides in process), for a batch
 * (store/batch.ts), in one statement and one commit: each takes its source if that is still unused
 * and belongs to no customer, and is recorded as decided, with its source as the processor left it,
 * its event and its notify call. Answers per charge, in order, whether it took its source; one that
 * did not wrote nothing. Of two charges of one batch on one source, one takes it.
 *
 * The `VALUES` list is left for PostgreSQL to inline: it knows the number of rows and drives a key
 * lookup in sources for each. Materialized, the statement cost 8-36% more instructions a charge;
 * with the sources also named by `= ANY(array)`, which put the list on the inner side of the join,
 * its cost grew with the square of the batch (bench/README.md, twelfth round).
 */
export async function insertDecidedChargesTakingFreeSources(
  db: Queryable,
  items: readonly DecidedNewCharge[],
): Promise<boolean[]> {
  const rows = items.map((i) =>
    Object.assign(outcomeRow(i), newChargeColumns(i.scope, i.asked), { created_at: i.createdAt }),
  )
  const notify = items.some((i) => i.event.delivery)
  const sql = DECIDED_CHARGES.statement(
    rows.length,
    (batch) => `WITH v AS ${batch}, taken AS (
       UPDATE sources s SET used = true, ${SETTLE_SOURCE}
       FROM v
       WHERE s.id = v.source_id AND s.account_id = v.account_id
         AND s.livemode = v.livemode AND s.used = false AND s.customer_id IS NULL AND s.vaulted = false
       RETURNING v.*
     ), charge AS (
       INSERT INTO charges (id, account_id, livemode, source_id, customer_id, amount, amount_authorized, currency,
         description, statement_descriptor, status, authorized, captured, capture, require_auth, action,
         action_token, processor_ref, failure_data, metadata, idempotency_key, created_at, updated_at)
       SELECT v.id, v.account_id, v.livemode, v.source_id, v.customer_id, v.amount, v.amount, v.currency,
         v.description, v.statement_descriptor, v.status, v.authorized, v.captured, v.capture, v.require_auth,
         v.action, v.action_token, v.processor_ref, v.failure_data, v.metadata, v.idempotency_key, v.created_at, v.at
       FROM taken v
     ), ${eventsWithNotifyCalls('taken v', notify)}
     SELECT id FROM taken`,
    notify ? 'notify' : '',
  )
  const res = await db.query<{ id: string }>(sql, DECIDED_CHARGES.values(rows), {
    batch: true,
  })
  const taken = new Set(res.rows.map((r) => r.id))
  return items.map((i) => taken.has(i.charge.id))
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
