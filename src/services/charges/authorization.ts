import { hash, randomBytes } from 'node:crypto'
import { timestampNow } from '../../domain/time.js'
import { type PaymentRequest, type Processor, ProcessorError } from '../../processor/processor.js'
import type { ChargeView } from '../../schemas/charge.js'
import type { SourceType } from '../../schemas/source.js'
import { recordAuthorizationOutcome } from '../../store/authorization-outcomes.js'
import { type ChargePatch, type ChargeRow, settleReversal } from '../../store/charges.js'
import { seededToken } from '../../store/ids.js'
import type { Scope } from '../../store/scope.js'
import { getSourceWithCard, type SourceRow, type SourceWithCard } from '../../store/sources.js'
import { type AccountTimeReading, accountNow } from '../../store/test-clocks.js'
import type { AuthorizationResult, ChargeContext, HostedPageUrl, StoredAction } from './context.js'
import { chargeView, currentView } from './views.js'

const PROCESSOR_FAULT: Record<ProcessorError['kind'], string> = {
  timeout: 'did not answer in time',
  unavailable: 'could not be reached',
  failed: 'could not be reached',
  refused: 'refused the request',
  unreachable: 'could not be reached',
}

/**
 * A linked bank account serves until its `expires_at` (API timestamps compare as text); past it,
 * the payer links one again through the bank step, as on a first payment.
 */
const bankLinkHolds = (bankAccount: unknown, at: string) =>
  bankAccount !== null && ((bankAccount as { expires_at?: string }).expires_at ?? at) >= at

/** How often an outcome is worked out again on a saved source that other charges keep changing. */
const MAX_SOURCE_READS = 5

/** A card source whose number is no longer kept (docs/api.md, card data) cannot be charged. */
const CARD_UNAVAILABLE = {
  code: 'card_unavailable',
  reason: 'The card number of this source is no longer kept',
  next_steps: 'Ask the payer for the card again and charge a new source',
  provider_response: {},
}

/**
 * A processor that can hold no authorization the service has not heard of: one deciding in the
 * service's own process, or none at all.
 */
export const cannotHoldUnknown = (processor: Processor | undefined) =>
  processor === undefined || processor.decidesInProcess === true

/**
 * An authorization the processor gave no answer to. One that decides in process cannot have
 * done anything meanwhile; nor one that refused the request or was never reached, when this was
 * the first call for the charge: then the charge is simply declined. Any other may have
 * authorized it, so the charge fails and the authorization is reversed. `repeated`: an earlier
 * call for the charge may have reached the processor (a repeat after a process died, a payer's
 * answer to a step it began), so a refusal of this one says nothing of what it holds.
 */
export function processorFailure(processor: Processor, err: ProcessorError, repeated: boolean): AuthorizationResult {
  const failure = {
    code: err.kind === 'timeout' ? 'processor_timeout' : 'processor_unavailable',
    reason: `The payment processor ${PROCESSOR_FAULT[err.kind]}`,
    next_steps: 'Retry with a new source; nothing is taken, and any amount the processor held is released',
    provider_response: { error: err.kind },
  }
  const didNothing = cannotHoldUnknown(processor) || (err.didNothing && !repeated)
  return didNothing ? { outcome: 'declined', failure } : { outcome: 'unknown', failure }
}

function actionFor(step: StoredAction['step'], chargeId: string, token: string, url: HostedPageUrl): StoredAction {
  if (step === 'otp') {
    // derived one way from the token, so the confirmation id never gives away part of it
    const confirmation = hash('sha256', `confirmation:${token}`).slice(0, 24)
    return { type: 'verify_otp', confirmation_id: `conf_${confirmation}`, step }
  }
  return { type: 'redirect_to_url', url: url(chargeId, token), step }
}

/** What an authorization's result sets on its charge, and the event that says so. */
function decision(charge: ChargeRow, result: AuthorizationResult, url: HostedPageUrl, pageToken: () => string) {
  // A decided charge keeps its page token (its action is cleared): the payer's link then shows
  // the outcome, and a second answer there is refused as charge_not_pending, not taken as unknown.
  if (result.outcome === 'authorized') {
    const patch: ChargePatch = {
      status: 'succeeded',
      authorized: true,
      captured: charge.capture,
      processing: null,
      action: null,
      processor_ref: result.reference,
      otp_attempts: charge.otp_attempts,
    }
    return { patch, eventType: 'charge.succeeded' }
  }
  if (result.outcome === 'action_required') {
    const token = pageToken()
    const action = actionFor(result.step, charge.id, token, url)
    const patch: ChargePatch = {
      processing: null,
      action: { ...action },
      action_token: token,
      processor_ref: result.reference,
    }
    return { patch, eventType: 'charge.pending' }
  }
  const patch: ChargePatch = {
    status: 'failed',
    processing: null,
    action: null,
    failure_data: { ...result.failure },
    otp_attempts: charge.otp_attempts,
    ...(result.outcome === 'declined' && result.reference ? { processor_ref: result.reference } : {}),
  }
  return { patch, eventType: 'charge.failed' }
}

export function authorizations(ctx: ChargeContext) {
  const { db, vault, events } = ctx

  /**
   * `at`: the time of the request, the account's in test mode. `securityCode`: one sent with this
   * request, checked instead of any the source still keeps.
   */
  function paymentRequest(
    charge: ChargeRow,
    source: SourceWithCard,
    at: string,
    securityCode?: string,
  ): PaymentRequest {
    const card = source.card as { exp_month: string; exp_year: string; name: string } | null
    const owner = source.owner as { name?: string; billing?: { name?: string } } | null
    return {
      chargeId: charge.id,
      livemode: charge.livemode,
      sourceType: source.type as SourceType,
      amount: charge.amount,
      currency: charge.currency,
      requireAuth: charge.require_auth,
      vaulted: source.vaulted,
      bankLinked: bankLinkHolds(source.bank_account, at),
      holderName: owner?.name || owner?.billing?.name || card?.name,
      at,
      ...(source.card_number_enc && card
        ? {
            card: {
              number: vault.decrypt(source.card_number_enc),
              cvc: securityCode ?? (source.card_cvc_enc ? vault.decrypt(source.card_cvc_enc) : undefined),
              expMonth: card.exp_month,
              expYear: card.exp_year,
            },
          }
        : {}),
    }
  }

  /** Calls the processor, turning its faults into the result they stand for. */
  async function ask<T>(processor: Processor, call: () => Promise<T>, repeated: boolean) {
    try {
      return await call()
    } catch (err) {
      if (err instanceof ProcessorError) return processorFailure(processor, err, repeated)
      throw err
    }
  }

  /**
   * Records an authorization's result: the charge as decided with its operation done, its source
   * as the processor left it, and its event, in one statement. The charge is worked out from the
   * row in hand: the run of the operation that read it holds it, and the outcome is recorded only
   * while it still does. Card data serves the authorization only: the security code is erased once
   * it is decided, and so is a single-use source's number (a saved card keeps it, to be charged
   * again). `readTime`: the account's time as read with the charge, if it was.
   *
   * The source is as read before the processor was called; a saved one may have changed since (a
   * concurrent charge linked its bank account, or checked its card). The outcome is then recorded
   * on the source as it is now, read again: a link made meanwhile is the one kept, as the account
   * linked first is.
   */
  async function record(
    scope: Scope,
    charge: ChargeRow,
    source: SourceWithCard,
    result: AuthorizationResult,
    url: HostedPageUrl,
    readTime?: AccountTimeReading,
  ): Promise<ChargeView> {
    // a deterministic account's page token comes from its seed, as its ids do
    const seeded = result.outcome === 'action_required' ? await seededToken(db, scope) : undefined
    const token = seeded ?? randomBytes(24).toString('hex')
    let read = source
    for (let attempt = 1; ; attempt++) {
      const recorded = await recordOn(scope, charge, read, result, url, token, readTime)
      if (recorded !== 'source_changed') return recorded
      // the charge stays under way: the recovery sweep records it if this run cannot
      if (attempt === MAX_SOURCE_READS) throw new Error(`the source ${source.id} kept changing under ${charge.id}`)
      read = (await getSourceWithCard(db, scope, source.id)) as SourceWithCard
    }
  }

  async function recordOn(
    scope: Scope,
    charge: ChargeRow,
    source: SourceWithCard,
    result: AuthorizationResult,
    url: HostedPageUrl,
    token: string,
    readTime?: AccountTimeReading,
  ): Promise<ChargeView | 'source_changed'> {
    // in test mode, the account's time, which a test clock may have moved past the real time
    const accountTime = await accountNow(db, scope, readTime)
    const at =
      accountTime === undefined
        ? timestampNow(charge.updated_at, source.updated_at)
        : ([accountTime, charge.updated_at, source.updated_at].sort().at(-1) as string)
    const { patch, eventType } = decision(charge, result, url, () => token)
    const cvcCheck = result.outcome === 'unknown' ? undefined : result.cvcCheck
    const checked = cvcCheck === 'pass' || cvcCheck === 'fail' ? cvcCheck : undefined
    // an account linked while the processor was asked (by another charge of the source) stays
    const linked = result.outcome === 'authorized' ? result.bankAccount : undefined
    const bankAccount = linked && !bankLinkHolds(source.bank_account, at) ? linked : undefined
    const decided = result.outcome !== 'action_required'
    const changed = checked !== undefined || bankAccount !== undefined
    const settled: SourceRow = {
      ...source,
      card: checked && source.card ? { ...source.card, cvc_checked: checked } : source.card,
      bank_account: bankAccount ? { ...bankAccount } : source.bank_account,
      updated_at: changed ? at : source.updated_at,
    }
    // refunds come only after an authorization, so there are none yet
    const view = chargeView({ ...charge, ...patch, processing: null, updated_at: at }, settled, [])
    const event = await events.prepare(scope, eventType, view, at)
    const recorded = await recordAuthorizationOutcome(db, {
      scope,
      held: charge,
      charge: patch,
      source: {
        id: source.id,
        read: { card: source.card, bankAccount: source.bank_account },
        card: settled.card,
        bankAccount: settled.bank_account,
        eraseSecurityCode: decided,
        eraseCardNumber: decided && !source.vaulted,
        changed,
      },
      reversalOwed: result.outcome === 'unknown',
      event,
      at,
    })
    if (recorded === 'source_changed') return recorded
    // another run of the operation ended it first: the charge is as that run recorded it
    if (recorded === 'ended') return currentView(db, scope, charge.id)
    events.stored(event)
    // the reversal is owed in the store already: the charge is answered without waiting a second
    // call timeout for it, and a process that dies meanwhile leaves it to the recovery sweep
    if (result.outcome === 'unknown') track(reverseUnknown(scope, charge.id))
    return view
  }

  /**
   * Sends a charge's authorization and records its result. A card source whose number is gone
   * fails the charge without a call: no processor is ever asked to charge a card it is not given.
   * `repeated`: an earlier call for the charge may have reached the processor (processorFailure).
   * `securityCode`: one sent with this request. `readTime`: the account's time as read with the
   * charge, if it was.
   */
  async function authorize(
    scope: Scope,
    charge: ChargeRow,
    source: SourceWithCard,
    url: HostedPageUrl,
    { repeated, securityCode, readTime }: { repeated: boolean; securityCode?: string; readTime?: AccountTimeReading },
  ): Promise<ChargeView> {
    const processor = ctx.processorFor(scope.livemode)
    const at = (await accountNow(db, scope, readTime)) ?? timestampNow()
    const result: AuthorizationResult =
      source.type === 'card' && !source.card_number_enc
        ? { outcome: 'declined', failure: CARD_UNAVAILABLE }
        : await ask(processor, () => processor.authorize(paymentRequest(charge, source, at, securityCode)), repeated)
    return record(scope, charge, source, result, url, readTime)
  }

  /** Reversals sent in the background, for `waitForReversals`. */
  const reversing = new Set<Promise<void>>()
  function track(reversal: Promise<void>): void {
    reversing.add(reversal)
    void reversal.finally(() => reversing.delete(reversal))
  }

  /** Waits for the reversals under way: a closing app lets them finish rather than cut them off. */
  async function waitForReversals(): Promise<void> {
    while (reversing.size > 0) await Promise.all(reversing)
  }

  /**
   * Asks the processor to cancel whatever it authorized for a charge whose authorization's outcome
   * is unknown, and records that nothing is held when it says so. Until then the reversal stays
   * owed and the recovery sweep asks again. Never throws: the charge's answer is already decided
   * and stored, and a reversal that went wrong is only one to ask for again.
   */
  async function reverseUnknown(scope: Scope, chargeId: string): Promise<void> {
    try {
      const outcome = await ctx.processorFor(scope.livemode).reverse(chargeId)
      if (outcome?.outcome === 'succeeded') await settleReversal(db, chargeId)
    } catch {
      // owed still: the sweep asks again
    }
  }

  return { paymentRequest, ask, record, authorize, reverseUnknown, waitForReversals }
}

export type Authorizations = ReturnType<typeof authorizations>
