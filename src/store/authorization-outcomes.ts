import { sharedStatement } from './batch.js'
import { type ChargePatch, type ChargeRow, patchJson, patchSetsFromJson } from './charges.js'
import type { Queryable } from './db.js'
import type { Scope } from './scope.js'
import type { SourceAfterAuthorization } from './sources.js'

/** An event to store with the change it records, and the notify call it queues, if any. */
export interface EventToStore {
  id: string
  type: string
  data: object
  delivery?: { id: string; url: string; payload: string } | undefined
}

/** Everything an authorization's result changes, worked out by the caller, at one time. */
export interface AuthorizationOutcome {
  scope: Scope
  /**
   * the charge as the run that decided it read it: the outcome is recorded while that run still
   * holds the charge's operation (store/charges.ts, patchHeldCharge), or, when the recovery sweep
   * let a payer's answer go, while the charge still waits for the step that run answered
   */
  held: Pick<ChargeRow, 'id' | 'processing_since' | 'action_token'>
  /** the charge's columns as decided; its operation is done */
  charge: ChargePatch
  /** `read`: the source's card and bank account as the outcome was worked out from them */
  source: { id: string; read: { card: object | null; bankAccount: object | null } } & SourceAfterAuthorization
  /** the processor gave no answer and may hold an authorization all the same: a reversal is owed */
  reversalOwed: boolean
  event: EventToStore
  /** the time of the change: the charge's updated_at, the event's created_at */
  at: string
}

/** The statement of `recordOutcomes`, over arrays of one element per outcome. */
const RECORD_OUTCOMES = `WITH v AS (
     SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::boolean[], $4::jsonb[], $5::text[], $6::text[],
       $7::text[], $8::boolean[], $9::boolean[], $10::boolean[], $11::text[], $12::text[], $13::boolean[],
       $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::timestamptz[], $20::text[],
       $21::jsonb[], $22::jsonb[])
       AS v (charge_id, at, reversal_owed, patch, source_id, card, bank_account, erase_security_code,
         erase_card_number, source_changed, event_id, account_id, livemode, event_type, event_data, delivery_id,
         delivery_url, delivery_payload, held_since, held_action_token, read_card, read_bank_account)
   ), source_locked AS (
     -- sources before charges, the order a new charge and a customer's delete lock them in
     SELECT s.id, s.card::jsonb IS NOT DISTINCT FROM v.read_card
         AND s.bank_account::jsonb IS NOT DISTINCT FROM v.read_bank_account AS as_read
     FROM sources s JOIN v ON s.id = v.source_id ORDER BY s.id FOR UPDATE OF s
   ), charge AS (
     UPDATE charges c SET ${patchSetsFromJson('c', 'v.patch').join(', ')}, updated_at = v.at,
       reversal_asked_at = CASE WHEN v.reversal_owed THEN now() ELSE c.reversal_asked_at END
     FROM v JOIN source_locked ON source_locked.id = v.source_id AND source_locked.as_read WHERE c.id = v.charge_id
       AND (c.processing_since = v.held_since
         -- a payer's answer the sweep let go: only while the charge still waits for that step
         OR (c.processing IS NULL AND c.status = 'pending' AND c.action IS NOT NULL
           AND c.action_token = v.held_action_token))
     RETURNING c.id
   ), recorded AS (
     SELECT v.* FROM v JOIN charge ON charge.id = v.charge_id
   ), source AS (
     UPDATE sources s SET card = v.card::json, bank_account = v.bank_account::json,
       card_cvc_enc = CASE WHEN v.erase_security_code THEN NULL ELSE s.card_cvc_enc END,
       card_number_enc = CASE WHEN v.erase_card_number THEN NULL ELSE s.card_number_enc END,
       updated_at = CASE WHEN v.source_changed THEN v.at ELSE s.updated_at END
     FROM recorded v WHERE s.id = v.source_id
   ), event AS (
     INSERT INTO events (id, account_id, livemode, type, charge_id, data, created_at)
     SELECT v.event_id, v.account_id, v.livemode, v.event_type, v.charge_id, v.event_data::json, v.at FROM recorded v
   ), delivery AS (
     INSERT INTO deliveries (id, account_id, livemode, event_id, event_type, url, payload, status, next_attempt_at)
     SELECT v.delivery_id, v.account_id, v.livemode, v.event_id, v.event_type, v.delivery_url, v.delivery_payload,
       'pending', now()
     FROM recorded v WHERE v.delivery_id IS NOT NULL
   )
   SELECT v.charge_id AS id, charge.id IS NOT NULL AS recorded, source_locked.as_read
   FROM v LEFT JOIN charge ON charge.id = v.charge_id LEFT JOIN source_locked ON source_locked.id = v.source_id`

/**
 * Records authorizations' outcomes in one statement, and so one round trip and one commit: each
 * charge as decided, its source as the processor left it, its event and the event's notify call.
 * Concurrent calls share the statement (store/batch.ts), each a row of its arrays. Answers, for each,
 * whether it was recorded: not when another run of the operation ended it first.
 */
const recordOutcomes = sharedStatement(
  async (db, items: AuthorizationOutcome[]) => {
    const col = <T>(f: (o: AuthorizationOutcome) => T) => items.map(f)
    const json = (v: object | null) => (v === null ? null : JSON.stringify(v))
    const res = await db.query<{ id: string; recorded: boolean; as_read: boolean | null }>(RECORD_OUTCOMES, [
      col((o) => o.held.id),
      col((o) => o.at),
      col((o) => o.reversalOwed),
      col((o) => patchJson({ ...o.charge, processing: null })),
      col((o) => o.source.id),
      col((o) => json(o.source.card)),
      col((o) => json(o.source.bankAccount)),
      col((o) => o.source.eraseSecurityCode),
      col((o) => o.source.eraseCardNumber),
      col((o) => o.source.changed),
      col((o) => o.event.id),
      col((o) => o.scope.accountId),
      col((o) => o.scope.livemode),
      col((o) => o.event.type),
      col((o) => JSON.stringify(o.event.data)),
      col((o) => o.event.delivery?.id ?? null),
      col((o) => o.event.delivery?.url ?? null),
      col((o) => o.event.delivery?.payload ?? null),
      col((o) => o.held.processing_since),
      col((o) => o.held.action_token),
      col((o) => json(o.source.read.card)),
      col((o) => json(o.source.read.bankAccount)),
    ])
    const found = new Map(res.rows.map((r) => [r.id, r]))
    return items.map((o): OutcomeRecorded => {
      const row = found.get(o.held.id)
      if (row?.recorded) return 'recorded'
      return row?.as_read === false ? 'source_changed' : 'ended'
    })
  },
  // a vaulted source may be charged twice at once: its two outcomes go in turn
  { key: (o) => o.source.id },
)

/**
 * Whether an outcome was recorded; if not, why, having written nothing: another run of the
 * operation ended it first, or the source's card or bank account are no longer as the outcome was
 * worked out from (another charge of a saved source changed them meanwhile).
 */
export type OutcomeRecorded = 'recorded' | 'ended' | 'source_changed'

/**
 * Records an authorization's outcome in one statement, and so one round trip and one commit: the
 * charge as decided, its source as the processor left it, its event and the event's notify call.
 * Every value comes from the caller, so the event holds exactly the charge the caller answers with.
 */
export function recordAuthorizationOutcome(db: Queryable, o: AuthorizationOutcome): Promise<OutcomeRecorded> {
  return recordOutcomes(db, o)
}
