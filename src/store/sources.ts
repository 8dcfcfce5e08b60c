import { sharedStatement } from './batch.js'
import type { Queryable } from './db.js'
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

/** The columns of a source's row, named here only. The ciphertexts are read only with the card. */
export const SOURCE_COLUMNS = [
  'id',
  'account_id',
  'livemode',
  'type',
  'card',
  'bank_account',
  'redirect',
  'owner',
  'metadata',
  'vaulted',
  'used',
  'customer_id',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SourceRow)[]

const SELECT = SOURCE_COLUMNS.join(', ')

interface SourceInsert {
  scope: Scope
  source: NewSource
}

const json = (v: object | null) => (v === null ? null : JSON.stringify(v))

/**
 * New sources in one statement; concurrent creates share it (store/batch.ts). Only the times come
 * back (a test-mode account's clock sets them): the rest of each row is what was written, so the
 * driver does not read back and parse the JSON it was just sent.
 */
const insertSources = sharedStatement(async (db, items: SourceInsert[]): Promise<SourceRow[]> => {
  const res = await db.query<{ id: string; created_at: string; updated_at: string }>(
    `INSERT INTO sources (id, account_id, livemode, type, card, card_number_enc, card_cvc_enc, redirect, owner,
       idempotency_key, metadata)
     SELECT id, account_id, livemode, type, card::json, card_number_enc, card_cvc_enc, redirect::json, owner::json,
       idempotency_key, '{}'::json
     FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
       $9::text[], $10::text[])
       AS v (id, account_id, livemode, type, card, card_number_enc, card_cvc_enc, redirect, owner, idempotency_key)
     RETURNING id, created_at, updated_at`,
    [
      items.map((i) => i.source.id),
      items.map((i) => i.scope.accountId),
      items.map((i) => i.scope.livemode),
      items.map((i) => i.source.type),
      items.map((i) => json(i.source.card)),
      items.map((i) => i.source.cardNumberEnc),
      items.map((i) => i.source.cardCvcEnc),
      items.map((i) => json(i.source.redirect)),
      items.map((i) => json(i.source.owner)),
      items.map((i) => i.source.idempotencyKey),
    ],
  )
  const times = new Map(res.rows.map((r) => [r.id, r]))
  return items.map(({ scope, source: s }) => {
    const { created_at, updated_at } = times.get(s.id) as { created_at: string; updated_at: string }
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
      created_at,
      updated_at,
    }
  })
})

export function insertSource(db: Queryable, scope: Scope, source: NewSource): Promise<SourceRow> {
  return insertSources(db, { scope, source })
}

const SOURCE_BY_ID = `SELECT ${SELECT} FROM sources WHERE id = $1 AND account_id = $2 AND livemode = $3`

export async function getSource(db: Queryable, scope: Scope, id: string): Promise<SourceRow | undefined> {
  const res = await db.query<SourceRow>(SOURCE_BY_ID, [id, scope.accountId, scope.livemode])
  return res.rows[0]
}

const SOURCE_BY_KEY = `SELECT ${SELECT} FROM sources WHERE account_id = $1 AND livemode = $2 AND idempotency_key = $3
   ORDER BY id DESC LIMIT 1`

export async function getSourceByKey(db: Queryable, scope: Scope, key: string): Promise<SourceRow | undefined> {
  const res = await db.query<SourceRow>(SOURCE_BY_KEY, [scope.accountId, scope.livemode, key])
  return res.rows[0]
}

/**
 * Marks an unused source used, in one statement, so that of any number of concurrent
 * consumers exactly one gets the row back. With a customer id the source is also vaulted, when it
 * can still be charged: a card source whose number was erased (never used within the retention)
 * is not taken. `attachKey`: the attaching request's Idempotency-Key, kept so that a retry of it
 * is answered (sourceConsumption).
 */
export async function consumeSource(
  db: Queryable,
  scope: Scope,
  id: string,
  attachTo?: string,
  attachKey?: string,
): Promise<SourceRow | undefined> {
  const res = await db.query<SourceRow>(
    `UPDATE sources
     SET used = true, updated_at = now(),
         vaulted = vaulted OR $4::text IS NOT NULL,
         customer_id = COALESCE($4::text, customer_id),
         attach_key = $5
     WHERE id = $1 AND account_id = $2 AND livemode = $3 AND used = false
       AND ($4::text IS NULL OR type <> 'card' OR card_number_enc IS NOT NULL)
     RETURNING ${SELECT}`,
    [id, scope.accountId, scope.livemode, attachTo ?? null, attachKey ?? null],
  )
  return res.rows[0]
}

export interface SourceConsumption {
  source: SourceRow
  /** a card source still keeps its number, so it can be charged */
  cardKept: boolean
  /** the Idempotency-Key of the request that attached it */
  attachKey: string | null
}

/** A source as it stands for being consumed: why it could not be, or by which request it was. */
export async function sourceConsumption(
  db: Queryable,
  scope: Scope,
  id: string,
): Promise<SourceConsumption | undefined> {
  const res = await db.query<SourceRow & { card_kept: boolean; attach_key: string | null }>(
    `SELECT ${SELECT}, card_number_enc IS NOT NULL AS card_kept, attach_key
     FROM sources WHERE id = $1 AND account_id = $2 AND livemode = $3`,
    [id, scope.accountId, scope.livemode],
  )
  const row = res.rows[0]
  if (!row) return undefined
  const { card_kept, attach_key, ...source } = row
  return { source, cardKept: card_kept, attachKey: attach_key }
}

/**
 * Erases the card data of the sources made before `beforeId` (ids sort by creation time): the
 * security code of every one, and the card number of one never used and no customer's, which no
 * charge has needed within the retention. Looks at `limit` sources at most, in id order from where
 * the last call left off, and moves that position on; answers how many it looked at and how many
 * it erased anything of. A range of the primary key: no index is kept for it, so creating a source
 * costs nothing more. Processes that run it at once look at the same sources, and the position
 * only moves forward.
 */
export async function eraseOldCardData(
  db: Queryable,
  beforeId: string,
  limit: number,
): Promise<{ seen: number; erased: number }> {
  const res = await db.query<{ seen: number; erased: number }>(
    `WITH seen AS (
       SELECT id FROM sources
       WHERE id > coalesce((SELECT position FROM sweep_positions WHERE name = 'card_data'), '')
         AND id < $1
       ORDER BY id LIMIT $2
     ), erased AS (
       UPDATE sources s SET card_cvc_enc = NULL,
         card_number_enc = CASE WHEN s.used OR s.customer_id IS NOT NULL THEN s.card_number_enc END
       FROM seen
       WHERE s.id = seen.id
         AND (s.card_cvc_enc IS NOT NULL OR (s.card_number_enc IS NOT NULL AND NOT s.used AND s.customer_id IS NULL))
       RETURNING s.id
     ), moved AS (
       INSERT INTO sweep_positions (name, position)
       SELECT 'card_data', max(id) FROM seen HAVING count(*) > 0
       ON CONFLICT (name) DO UPDATE SET position = GREATEST(sweep_positions.position, EXCLUDED.position)
     )
     SELECT (SELECT count(*)::int FROM seen) AS seen, (SELECT count(*)::int FROM erased) AS erased`,
    [beforeId, limit],
  )
  return res.rows[0] as { seen: number; erased: number }
}

/**
 * Erases, as eraseOldCardData does, the card data of test-mode sources older than `retentionMs` by
 * their account's time, in the accounts whose test clock runs ahead or stands (deterministic
 * ones): the sweep in id order goes by the real time only. Up to `limit` sources a call.
 */
export async function eraseOldTestCardData(db: Queryable, retentionMs: number, limit: number): Promise<number> {
  const res = await db.query(
    `UPDATE sources s SET card_cvc_enc = NULL,
       card_number_enc = CASE WHEN s.used OR s.customer_id IS NOT NULL THEN s.card_number_enc END
     WHERE s.id IN (
       SELECT t.id FROM accounts a JOIN sources t ON t.account_id = a.id
       WHERE (a.test_clock_offset_seconds > 0 OR a.test_clock_start IS NOT NULL) AND NOT t.livemode
         AND (t.card_cvc_enc IS NOT NULL OR (t.card_number_enc IS NOT NULL AND NOT t.used AND t.customer_id IS NULL))
         AND t.created_at < account_now(a.id, false) - $1 * interval '1 millisecond'
       LIMIT $2)
     RETURNING s.id`,
    [retentionMs, limit],
  )
  return res.rows.length
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
     RETURNING ${SELECT}`,
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
    `SELECT ${SELECT} FROM sources WHERE customer_id = ANY($1::text[]) ORDER BY id`,
    [customerIds],
  )
  return res.rows
}

/** A source with the ciphertexts of its card, for a request to the processor. */
export interface SourceWithCard extends SourceRow {
  card_number_enc: string | null
  card_cvc_enc: string | null
}

/**
 * A source with its card's ciphertexts. With `lock`, the row stays locked until the transaction
 * ends: a charge reads the source it takes this way, so a detach or a second charge waits for it.
 */
export async function getSourceWithCard(
  db: Queryable,
  scope: Scope,
  id: string,
  lock = false,
): Promise<SourceWithCard | undefined> {
  const res = await db.query<SourceWithCard>(
    `SELECT ${SELECT}, card_number_enc, card_cvc_enc FROM sources
     WHERE id = $1 AND account_id = $2 AND livemode = $3${lock ? ' FOR UPDATE' : ''}`,
    [id, scope.accountId, scope.livemode],
  )
  return res.rows[0]
}

/** What an authorization's outcome changes of its source. */
export interface SourceAfterAuthorization {
  card: object | null
  bankAccount: object | null
  /** the security code serves one authorization only */
  eraseSecurityCode: boolean
  /** a single-use source's number serves its one charge only */
  eraseCardNumber: boolean
  /** the card's check or the bank account changed, as the API shows the source */
  changed: boolean
}
