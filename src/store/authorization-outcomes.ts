import { type ChargePatch, patchSets } from './charges.js'
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
  chargeId: string
  /** the charge's columns as decided; its operation is done */
  charge: ChargePatch
  source: { id: string } & SourceAfterAuthorization
  /** the processor gave no answer and may hold an authorization all the same: a reversal is owed */
  reversalOwed: boolean
  event: EventToStore
  /** the time of the change: the charge's updated_at, the event's created_at */
  at: string
}

/**
 * Records an authorization's outcome in one statement, and so one round trip and one commit: the
 * charge as decided, its source as the processor left it, its event and the event's notify call.
 * Every value comes from the caller, so the event holds exactly the charge the caller answers with.
 */
export async function recordAuthorizationOutcome(db: Queryable, o: AuthorizationOutcome): Promise<void> {
  const params: unknown[] = [o.chargeId, o.at, o.reversalOwed]
  const sets = patchSets({ ...o.charge, processing: null }, params)
  const source = params.length + 1
  params.push(
    o.source.id,
    o.source.card === null ? null : JSON.stringify(o.source.card),
    o.source.bankAccount === null ? null : JSON.stringify(o.source.bankAccount),
    o.source.eraseSecurityCode,
    o.source.eraseCardNumber,
    o.source.changed,
  )
  const event = params.length + 1
  params.push(o.event.id, o.scope.accountId, o.scope.livemode, o.event.type, JSON.stringify(o.event.data))
  const delivery = params.length + 1
  params.push(o.event.delivery?.id ?? null, o.event.delivery?.url ?? null, o.event.delivery?.payload ?? null)
  const $ = (n: number) => `$${n}`
  await db.query(
    `WITH charge AS (
       UPDATE charges SET ${sets.join(', ')}, updated_at = $2,
         reversal_asked_at = CASE WHEN $3 THEN now() ELSE reversal_asked_at END
       WHERE id = $1
     ), source AS (
       UPDATE sources SET card = ${$(source + 1)}::json, bank_account = ${$(source + 2)}::json,
         card_cvc_enc = CASE WHEN ${$(source + 3)} THEN NULL ELSE card_cvc_enc END,
         card_number_enc = CASE WHEN ${$(source + 4)} THEN NULL ELSE card_number_enc END,
         updated_at = CASE WHEN ${$(source + 5)} THEN $2 ELSE updated_at END
       WHERE id = ${$(source)}
     ), event AS (
       INSERT INTO events (id, account_id, livemode, type, charge_id, data, created_at)
       VALUES (${$(event)}, ${$(event + 1)}, ${$(event + 2)}, ${$(event + 3)}, $1, ${$(event + 4)}::json, $2)
     )
     INSERT INTO deliveries (id, account_id, livemode, event_id, event_type, url, payload, status, next_attempt_at)
     SELECT ${$(delivery)}::text, ${$(event + 1)}::text, ${$(event + 2)}::boolean, ${$(event)}::text,
       ${$(event + 3)}::text, ${$(delivery + 1)}::text, ${$(delivery + 2)}::text, 'pending', now()
     WHERE ${$(delivery)}::text IS NOT NULL`,
    params,
  )
}
