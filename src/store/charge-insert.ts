import { performance } from 'node:perf_hooks'
import { sharedStatement } from './batch.js'
import { CHARGE_COLUMNS, type ChargeRow } from './charges.js'
import type { Queryable } from './db.js'
import { timestampsFromJson } from './joined.js'
import type { Scope } from './scope.js'
import { SOURCE_COLUMNS, type SourceWithCard } from './sources.js'
import type { AccountTimeReading } from './test-clocks.js'

/** A new charge's row written with the source it takes, before its processor is called. */

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
  /** in test mode, the account's time as the charge was recorded */
  accountTime?: AccountTimeReading | undefined
}

interface ChargeAsked {
  scope: Scope
  charge: NewCharge
}

/** The statement of `insertCharges`, over arrays of one element per charge. */
const INSERT_CHARGES = `WITH v AS (
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
       description, statement_descriptor, status, capture, require_auth, processing, processing_since, metadata,
       idempotency_key, redirect_url)
     SELECT v.id, v.account_id, v.livemode, v.source_id, v.customer_id, v.amount, v.amount, v.currency,
       v.description, v.statement_descriptor, 'pending', v.capture, v.require_auth, 'authorize', now(), v.metadata::json,
       v.idempotency_key, v.redirect_url
     FROM v JOIN usable ON usable.charge_id = v.id
     RETURNING ${CHARGE_COLUMNS.join(', ')}
   )
   SELECT (SELECT to_json(s) FROM source s WHERE s.id = v.source_id) AS source,
     (SELECT to_json(c) FROM charge c WHERE c.id = v.id) AS charge,
     (SELECT updated_at FROM consumed WHERE consumed.id = v.source_id) AS consumed_at,
     CASE WHEN a.id IS NOT NULL THEN account_now(a.id, false) END AS account_time,
     a.test_clock_start IS NULL AS clock_runs
   FROM v LEFT JOIN accounts a ON a.id = v.account_id AND NOT v.livemode ORDER BY v.n`

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
      account_time: string | null
      clock_runs: boolean | null
    }>(INSERT_CHARGES, [
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
      col((i) => JSON.stringify(i.charge.metadata)),
      col((i) => i.charge.idempotency_key),
      col((i) => i.charge.redirect_url),
    ])
    const readAt = performance.now()
    return res.rows.map((found) => {
      if (!found.source) return {}
      const source = timestampsFromJson(found.source, SOURCE_COLUMNS)
      if (!found.charge) return { source }
      const consumed = found.consumed_at ? { used: true, updated_at: found.consumed_at } : {}
      const accountTime =
        found.account_time === null ? undefined : { time: found.account_time, runs: found.clock_runs !== false, readAt }
      return {
        source: { ...source, ...consumed },
        charge: timestampsFromJson(found.charge, CHARGE_COLUMNS),
        accountTime,
      }
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
 * taken and, in test mode, the account's time; the caller explains a source not taken.
 */
export function insertCharge(db: Queryable, scope: Scope, c: NewCharge): Promise<ChargeInsertion> {
  return insertCharges(db, { scope, charge: c })
}
