import type { Queryable } from './db.js'
import { columnNames } from './joined.js'
import { ParamRows } from './param-rows.js'
import type { Scope } from './scope.js'

export interface SourceRow {
  id: string
  account_id: string
  livemode: boolean
  type: string
  card: Record<string, unknown> | null
  bank_account: Record<string, unknown> | null
  redirect: Record<string, unknown> | null
  owner: Record<string, unknown> | null
  metadata: Record<string, unknown> | null
  vaulted: boolean
  used: boolean
  customer_id: string | null
  created_at: string
  updated_at: string
}

export interface NewSource {
  id: string
  type: string
  card: Record<string, unknown> | null
  cardNumberEnc: string | null
  cardCvcEnc: string | null
  redirect: Record<string, unknown> | null
  owner: Record<string, unknown> | null
  idempotencyKey: string | null
}

// The ciphertext columns are left out: they are read only by sourceSecrets.
export const SOURCE_COLUMNS =
  'id, account_id, livemode, type, card, bank_account, redirect, owner, metadata, vaulted, used, customer_id, created_at, updated_at'

export const SOURCE_NAMES = columnNames(SOURCE_COLUMNS)

/** The columns a source's view shows. */
export const SOURCE_VIEW_NAMES = [
  'id',
  'type',
  'card',
  'bank_account',
  'redirect',
  'owner',
  'vaulted',
  'used',
  'livemode',
  'metadata',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SourceRow)[]

export type SourceViewRow = Pick<SourceRow, (typeof SOURCE_VIEW_NAMES)[number]>

const NEW_SOURCES = new ParamRows<{
  id: string
  account_id: string
  livemode: boolean
  type: string
  card: object | null
  card_number_enc: string | null
  card_cvc_enc: string | null
  redirect: object | null
  owner: object | null
  idempotency_key: string | null
}>([
  ['id', 'text'],
  ['account_id', 'text'],
  ['livemode', 'boolean'],
  ['type', 'text'],
  ['card', 'json'],
  ['card_number_enc', 'text'],
  ['card_cvc_enc', 'text'],
  ['redirect', 'json'],
  ['owner', 'json'],
  ['idempotency_key', 'text'],
])

/**
 * New sources, for the callers of a batch (store/batch.ts), each with its own scope, in one
 * statement and one commit. The rows are built from the values in hand (storedSource); only the
 * time comes back from PostgreSQL, the same for all, so that every stored time is the database's
 * clock and the driver reads one column, not fourteen.
 */
export async function insertSources(db: Queryable, items: { scope: Scope; source: NewSource }[]): Promise<string> {
  const rows = items.map(({ scope, source: s }) => ({
    id: s.id,
    account_id: scope.accountId,
    livemode: scope.livemode,
    type: s.type,
    card: s.card,
    card_number_enc: s.cardNumberEnc,
    card_cvc_enc: s.cardCvcEnc,
    redirect: s.redirect,
    owner: s.owner,
    idempotency_key: s.idempotencyKey,
  }))
  const sql = NEW_SOURCES.statement(
    rows.length,
    (batch) => `INSERT INTO sources (${NEW_SOURCES.names}, metadata)
     SELECT *, '{}'::json FROM ${batch} AS v
     RETURNING created_at`,
  )
  const res = await db.query<{ created_at: string }>(sql, NEW_SOURCES.values(rows), { batch: true })
  return (res.rows[0] as { created_at: string }).created_at
}

/** The row of a source just stored, from the values in hand and the time PostgreSQL gave it. */
export function storedSource(scope: Scope, s: NewSource, createdAt: string): SourceRow {
  return {
    id: s.id,
    account_id: scope.accountId,
    livemode: scope.livemode,
    type: s.type,
    card: s.card,
    bank_account: null,
    redirect: s.redirect,
    owner: s.owner,
    metadata: {},
    vaulted: false,
    used: false,
    customer_id: null,
    created_at: createdAt,
    updated_at: createdAt,
  }
}

export async function getSource(db: Queryable, scope: Scope, id: string): Promise<SourceRow | undefined> {
  const res = await db.query<SourceRow>(
    `SELECT ${SOURCE_COLUMNS} FROM sources WHERE id = $1 AND account_id = $2 AND livemode = $3`,
    [id, scope.accountId, scope.livemode],
  )
  return res.rows[0]
}

export async function getSourceByKey(db: Queryable, scope: Scope, key: string): Promise<SourceRow | undefined> {
  const res = await db.query<SourceRow>(
    `SELECT ${SOURCE_COLUMNS} FROM sources WHERE account_id = $1 AND livemode = $2 AND idempotency_key = $3
     AND created_at > now() - interval '24 hours' ORDER BY id DESC LIMIT 1`,
    [scope.accountId, scope.livemode, key],
  )
  return res.rows[0]
}

/**
 * Marks an unused source used, in one statement, so that of any number of concurrent
 * consumers exactly one gets the row back. With a customer id the source is also vaulted.
 */
export async function consumeSource(
  db: Queryable,
  scope: Scope,
  id: string,
  attachTo?: string,
): Promise<SourceRow | undefined> {
  const res = await db.query<SourceRow>(
    `UPDATE sources
     SET used = true, updated_at = now(),
         vaulted = vaulted OR $4::text IS NOT NULL,
         customer_id = COALESCE($4::text, customer_id)
     WHERE id = $1 AND account_id = $2 AND livemode = $3 AND used = false
     RETURNING ${SOURCE_COLUMNS}`,
    [id, scope.accountId, scope.livemode, attachTo ?? null],
  )
  return res.rows[0]
}

/**
 * Erases the security codes of the sources made before `beforeId` (ids sort by creation time),
 * looking at `limit` sources at most, in id order from where the last call left off, and moves
 * that position on; answers how many it looked at and how many codes it erased. A range of the
 * primary key: no index is kept for it, so creating a source costs nothing more. Processes that
 * run it at once look at the same sources, and the position only moves forward.
 */
export async function eraseOldSecurityCodes(
  db: Queryable,
  beforeId: string,
  limit: number,
): Promise<{ seen: number; erased: number }> {
  const res = await db.query<{ seen: number; erased: number }>(
    `WITH seen AS (
       SELECT id, card_cvc_enc IS NOT NULL AS held FROM sources
       WHERE id > coalesce((SELECT position FROM sweep_positions WHERE name = 'security_codes'), '')
         AND id < $1
       ORDER BY id LIMIT $2
     ), erased AS (
       UPDATE sources s SET card_cvc_enc = NULL FROM seen
       WHERE s.id = seen.id AND seen.held AND s.card_cvc_enc IS NOT NULL
       RETURNING s.id
     ), moved AS (
       INSERT INTO sweep_positions (name, position)
       SELECT 'security_codes', max(id) FROM seen HAVING count(*) > 0
       ON CONFLICT (name) DO UPDATE SET position = GREATEST(sweep_positions.position, EXCLUDED.position)
     )
     SELECT (SELECT count(*)::int FROM seen) AS seen, (SELECT count(*)::int FROM erased) AS erased`,
    [beforeId, limit],
  )
  return res.rows[0] as { seen: number; erased: number }
}

/**
 * A detached source is used and no customer's: nothing can charge it again, so its card number and
 * security code are kept no longer.
 */
const FORGET_CARD = 'card_number_enc = NULL, card_cvc_enc = NULL'

export async function detachSource(
  db: Queryable,
  scope: Scope,
  customerId: string,
  id: string,
): Promise<SourceRow | undefined> {
  const res = await db.query<SourceRow>(
    `UPDATE sources SET customer_id = NULL, vaulted = false, updated_at = now(), ${FORGET_CARD}
     WHERE id = $1 AND account_id = $2 AND livemode = $3 AND customer_id = $4
     RETURNING ${SOURCE_COLUMNS}`,
    [id, scope.accountId, scope.livemode, customerId],
  )
  return res.rows[0]
}

export async function detachAllSources(db: Queryable, customerId: string): Promise<void> {
  await db.query(
    `UPDATE sources SET customer_id = NULL, vaulted = false, updated_at = now(), ${FORGET_CARD} WHERE customer_id = $1`,
    [customerId],
  )
}

export async function sourcesOfCustomers(db: Queryable, customerIds: string[]): Promise<SourceRow[]> {
  if (customerIds.length === 0) return []
  const res = await db.query<SourceRow>(
    `SELECT ${SOURCE_COLUMNS} FROM sources WHERE customer_id = ANY($1::text[]) ORDER BY id`,
    [customerIds],
  )
  return res.rows
}

export interface SourceSecrets {
  card_number_enc: string | null
  card_cvc_enc: string | null
}

/**
 * Unused sources that belong to no customer, with their ciphertexts, for a batch of charges about
 * to take them (store/batch.ts): one read for all. Answers per item, in order, undefined when its
 * source is not such a source of the item's account and mode.
 */
export async function freeSourcesWithSecrets(
  db: Queryable,
  items: readonly { scope: Scope; id: string }[],
): Promise<((SourceRow & SourceSecrets) | undefined)[]> {
  const res = await db.query<SourceRow & SourceSecrets>(
    `SELECT ${SOURCE_COLUMNS}, card_number_enc, card_cvc_enc FROM sources
     WHERE id = ANY($1::text[]) AND used = false AND customer_id IS NULL AND vaulted = false`,
    [items.map((i) => i.id)],
    { batch: true },
  )
  const found = new Map(res.rows.map((r) => [r.id, r]))
  return items.map(({ scope, id }) => {
    const row = found.get(id)
    return row && row.account_id === scope.accountId && row.livemode === scope.livemode ? row : undefined
  })
}

export async function sourceSecrets(db: Queryable, id: string): Promise<SourceSecrets | undefined> {
  const res = await db.query<SourceSecrets>('SELECT card_number_enc, card_cvc_enc FROM sources WHERE id = $1', [id])
  return res.rows[0]
}
