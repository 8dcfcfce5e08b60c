import { hash, randomBytes } from 'node:crypto'
import { timingSafeEqualText, type Vault } from '../crypto/vault.js'
import {
  type ChargeState,
  canCapture,
  canRefund,
  canVoid,
  isAwaitingPayer,
  type Refusal,
  statusAfterRefunds,
} from '../domain/charge-state.js'
import { newId } from '../domain/ids.js'
import { normalizeCurrency } from '../domain/money.js'
import { timestampNow } from '../domain/time.js'
import { AppError, invalidParams, notFound, type Violation } from '../errors.js'
import type { ChargeView, CreateChargeInput, RefundView } from '../http/schemas/charge.js'
import type { SourceType } from '../http/schemas/source.js'
import {
  type AuthorizeOutcome,
  type FailureData,
  type PayerAnswer,
  type PayerStep,
  type PaymentRequest,
  type Processor,
  ProcessorError,
} from '../processor/processor.js'
import { findAccount } from '../store/accounts.js'
import { batched } from '../store/batch.js'
import type { ChargeRow, ChargeViewRow, RefundRow, RefundViewRow } from '../store/charges.js'
import * as charges from '../store/charges.js'
import { getCustomer } from '../store/customers.js'
import type { Db, Queryable } from '../store/db.js'
import { CursorNotFound, type Page, type PageRequest } from '../store/list.js'
import type { Scope } from '../store/scope.js'
import type { SourceRow, SourceViewRow } from '../store/sources.js'
import * as sources from '../store/sources.js'
import type { EventRecorder } from './events.js'
import { sourceView, type Versioned } from './views.js'

export interface Processors {
  test: Processor
  live?: Processor | undefined
}

/** The payer step and how the charge shows it, kept with the charge while it is pending. */
interface StoredAction {
  type: 'redirect_to_url' | 'verify_otp'
  url?: string
  confirmation_id?: string
  step: PayerStep
}

/**
 * What the service learned of an authorization: the processor's answer, or `unknown`: a processor
 * elsewhere may hold an authorization for the charge that the service will never hear of (no
 * answer came, or the payer abandoned a step the processor had begun). The charge then fails,
 * and is reversed at the processor.
 */
type Learned = AuthorizeOutcome | { outcome: 'unknown'; failure: FailureData }

const PROCESSOR_FAULT: Record<ProcessorError['kind'], string> = {
  timeout: 'did not answer in time',
  unavailable: 'could not be reached',
  failed: 'could not be reached',
  refused: 'refused the request',
  unreachable: 'could not be reached',
}

/**
 * A processor that can hold no authorization the service has not heard of: one deciding in the
 * service's own process, or none at all.
 */
const holdsNothing = (processor: Processor | undefined) =>
  processor === undefined || processor.decidesInProcess === true

const MAX_OTP_ATTEMPTS = 3
const DEFAULT_REFUND_REASON = 'requested_by_customer'

export function refundView(r: RefundViewRow): RefundView {
  return {
    object: 'refund',
    id: r.id,
    amount: r.amount,
    currency: r.currency,
    reason: r.reason,
    status: r.status,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}

export function chargeView(c: ChargeViewRow, source: SourceViewRow, refunds: RefundViewRow[]): ChargeView {
  const action = c.action as StoredAction | null
  return {
    object: 'charge',
    id: c.id,
    amount: c.amount,
    amount_refunded: c.amount_refunded,
    authorized: c.authorized,
    captured: c.captured,
    currency: c.currency,
    statement_descriptor: c.statement_descriptor,
    description: c.description,
    // assigned, not spread: a spread followed by new keys costs Node 20 about 800 ns a key
    source: Object.assign(
      sourceView(source),
      { require_auth: c.require_auth },
      action
        ? {
            action: {
              type: action.type,
              ...(action.url ? { url: action.url } : {}),
              ...(action.confirmation_id ? { confirmation_id: action.confirmation_id } : {}),
            },
          }
        : {},
    ),
    refunds: refunds.map(refundView),
    status: c.status,
    livemode: c.livemode,
    created_at: c.created_at,
    updated_at: c.updated_at,
    metadata: c.metadata as ChargeView['metadata'],
    ...(c.failure_data ? { failure_data: c.failure_data as ChargeView['failure_data'] } : {}),
  }
}

function refuse(r: Refusal | undefined): void {
  if (r) throw new AppError(r.code, r.message, r.code === 'amount_too_large' ? { param: 'amount' } : {})
}

/** An account name as a statement descriptor: pattern P, 3 to 100 characters. */
export function descriptorFrom(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9\s'#_.\-,]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100)
  return cleaned.length >= 3 ? cleaned : 'JACKDAW'
}

/** The failure of a charge whose payer did not answer in time. */
function payerTimedOut(timeoutMs: number) {
  const hours = timeoutMs / 3_600_000
  const within = hours >= 1 && Number.isInteger(hours) ? `${hours} h` : `${Math.round(timeoutMs / 1000)} s`
  return {
    code: 'payment_expired',
    reason: `The payer did not complete the payment within ${within}`,
    next_steps: 'Start a new payment with a new source',
    provider_response: {},
  }
}

export interface ChargeDeps {
  db: Db
  vault: Vault
  processors: Processors
  events: EventRecorder
  /** for hosted-page links made outside a request (recovery): the public URL, else the listen address */
  publicUrl?: string | undefined
}

/**
 * Runs `fn` on every claimed item at once and answers how many there were. A sweep claims what it
 * finishes for the grace period only: one after another, a pass of twenty calls to a processor that
 * is timing out would outlast that, and another process would claim and finish the same items again.
 */
async function eachAtOnce<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<number> {
  // every item is seen through before a failure is passed on: none is left running unwatched
  const settled = await Promise.allSettled(items.map(fn))
  const failed = settled.find((r) => r.status === 'rejected')
  if (failed) throw failed.reason
  return items.length
}

export function chargeService(deps: ChargeDeps) {
  const { db, vault, events } = deps
  // Concurrent creates share the statement that records them, and concurrent outcomes theirs: a
  // round trip and a commit for a batch rather than for each charge (store/batch.ts).
  const takeFreeSource = batched((items: { scope: Scope; charge: charges.NewCharge }[]) =>
    charges.insertChargesTakingFreeSources(db, items),
  )
  const listVersions = batched((items: { scope: Scope; page: PageRequest }[]) => charges.listChargeVersions(db, items))
  const recordOutcome = batched(async (items: charges.AuthorizationOutcome[]) => {
    await charges.recordAuthorizations(db, items)
    return items.map(() => undefined)
  })
  const readFreeSource = batched((items: { scope: Scope; id: string }[]) => sources.freeSourcesWithSecrets(db, items))
  const recordDecided = batched((items: charges.DecidedNewCharge[]) =>
    charges.insertDecidedChargesTakingFreeSources(db, items),
  )

  const configuredProcessor = (livemode: boolean) => (livemode ? deps.processors.live : deps.processors.test)

  function processorFor(livemode: boolean): Processor {
    const processor = configuredProcessor(livemode)
    if (!processor) {
      throw new AppError(
        'livemode_unavailable',
        'Live mode has no payment processor configured (JACKDAW_LIVE_PROCESSOR_URL); use a test key',
      )
    }
    return processor
  }

  async function load(q: Queryable, row: ChargeRow): Promise<ChargeView> {
    const { source, refunds } = await charges.detailsOf(q, row)
    return chargeView(row, source, refunds)
  }

  /**
   * Saves an outcome with its event, in the caller's transaction; returns the charge as now.
   * `known` spares the reads when the caller already holds the source and refunds as they are.
   */
  async function record(
    q: Queryable,
    scope: Scope,
    id: string,
    patch: charges.ChargePatch,
    eventType?: string,
    known?: { source: SourceRow; refunds: RefundRow[] },
  ) {
    const row = await charges.patchCharge(q, id, patch)
    const view = known ? chargeView(row, known.source, known.refunds) : await load(q, row)
    if (eventType) await events.record(q, scope, eventType, view)
    return { row, view }
  }

  async function paymentRequest(
    charge: ChargeRow,
    source: SourceRow,
    known?: sources.SourceSecrets,
  ): Promise<PaymentRequest> {
    const secrets = known ?? (source.type === 'card' ? await sources.sourceSecrets(db, source.id) : undefined)
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
      bankLinked: source.bank_account !== null,
      holderName: owner?.name || owner?.billing?.name || card?.name,
      ...(secrets?.card_number_enc && card
        ? {
            card: {
              number: vault.decrypt(secrets.card_number_enc),
              cvc: secrets.card_cvc_enc ? vault.decrypt(secrets.card_cvc_enc) : undefined,
              expMonth: card.exp_month,
              expYear: card.exp_year,
            },
          }
        : {}),
    }
  }

  function actionFor(step: PayerStep, chargeId: string, token: string, baseUrl: string): StoredAction {
    if (step === 'otp') {
      // derived one way from the token, so the confirmation id never gives away part of it
      const confirmation = hash('sha256', `confirmation:${token}`).slice(0, 24)
      return { type: 'verify_otp', confirmation_id: `conf_${confirmation}`, step }
    }
    return { type: 'redirect_to_url', url: `${baseUrl}/v2/hosted/charges/${chargeId}?token=${token}`, step }
  }

  /**
   * What the processor said of an authorization, worked out from the rows in hand: the source as
   * it left it, the charge as decided, its view and its event, which holds exactly that charge.
   */
  function settleAuthorization(
    scope: Scope,
    charge: ChargeRow,
    source: SourceRow,
    outcome: Learned,
    baseUrl: string,
  ): { settled: charges.AuthorizationOutcome; view: ChargeView } {
    const at = timestampNow(charge.updated_at, source.updated_at)
    const cvcCheck = outcome.outcome === 'unknown' ? undefined : outcome.cvcCheck
    const cvcChecked = cvcCheck === 'pass' || cvcCheck === 'fail' ? cvcCheck : undefined
    const bankAccount = outcome.outcome === 'authorized' ? outcome.bankAccount : undefined
    const settled: SourceRow = {
      ...source,
      card: cvcChecked && source.card ? { ...source.card, cvc_checked: cvcChecked } : source.card,
      bank_account: bankAccount ? { ...bankAccount } : source.bank_account,
      updated_at: cvcChecked !== undefined || bankAccount !== undefined ? at : source.updated_at,
    }
    // A decided charge keeps its page token (its action is cleared): the payer's link then shows
    // the outcome, and a second answer there is refused as charge_not_pending, not taken as unknown.
    let patch: charges.ChargePatch
    let eventType: string
    if (outcome.outcome === 'authorized') {
      eventType = 'charge.succeeded'
      patch = {
        status: 'succeeded',
        authorized: true,
        captured: charge.capture,
        processing: null,
        action: null,
        processor_ref: outcome.reference,
      }
    } else if (outcome.outcome === 'action_required') {
      eventType = 'charge.pending'
      const token = randomBytes(24).toString('hex')
      const action = actionFor(outcome.step, charge.id, token, baseUrl)
      patch = { processing: null, action: { ...action }, action_token: token, processor_ref: outcome.reference }
    } else {
      eventType = 'charge.failed'
      patch = {
        status: 'failed',
        processing: null,
        action: null,
        failure_data: { ...outcome.failure },
        ...(outcome.outcome === 'declined' && outcome.reference ? { processor_ref: outcome.reference } : {}),
      }
    }
    const decided: ChargeRow = { ...charge, ...patch, updated_at: at }
    // refunds come only after an authorization, so there are none yet
    const view = chargeView(decided, settled, [])
    return {
      settled: {
        scope,
        source: {
          id: source.id,
          card: settled.card,
          bankAccount: settled.bank_account,
          // the security code is kept only while the payer still has a step to take
          eraseCvc: outcome.outcome !== 'action_required',
          updatedAt: settled.updated_at,
        },
        charge: decided,
        event: events.prepare(scope, eventType, view, at),
        // an outcome not learned is failed here and reversed at the processor (reverseUnlearned)
        reversalOwed: outcome.outcome === 'unknown',
      },
      view,
    }
  }

  /**
   * Records what the processor said of an authorization under way, in one statement shared with
   * the outcomes recorded at the same moment. The charge is worked out from the row in hand: an
   * operation under way holds it, so nothing else changes it.
   */
  async function applyAuthorization(
    scope: Scope,
    charge: ChargeRow,
    source: SourceRow,
    outcome: Learned,
    baseUrl: string,
  ): Promise<ChargeView> {
    const { settled, view } = settleAuthorization(scope, charge, source, outcome, baseUrl)
    await recordOutcome(settled)
    events.stored(settled.event)
    // the reversal is owed in the store already: the charge is answered without waiting a second
    // call timeout for it, and a process that dies meanwhile leaves it to the recovery sweep
    if (outcome.outcome === 'unknown') track(reverseUnlearned(scope, charge.id))
    return view
  }

  /** Reversals sent in the background, for `settled` to wait on. */
  const reversing = new Set<Promise<void>>()
  function track(reversal: Promise<void>): void {
    reversing.add(reversal)
    void reversal.finally(() => reversing.delete(reversal))
  }

  /** Waits for the reversals under way: a closing app lets them finish rather than cut them off. */
  async function settled(): Promise<void> {
    while (reversing.size > 0) await Promise.all(reversing)
  }

  /**
   * Asks the processor to cancel whatever it authorized for a charge whose authorization's outcome
   * was never learned, and records that nothing is held when it says so. Until then the reversal
   * stays owed and the recovery sweep asks again. Never throws: the charge's answer is already
   * decided and stored, and a reversal that went wrong is only one to ask for again.
   */
  async function reverseUnlearned(scope: Scope, chargeId: string): Promise<void> {
    try {
      const outcome = await processorFor(scope.livemode).reverse(chargeId)
      if (outcome?.outcome === 'succeeded') await charges.settleReversal(db, chargeId)
    } catch {
      // owed still: the sweep asks again
    }
  }

  /**
   * A new charge on a free single-use source, through a processor that decides in process: read
   * the source, ask, and record the charge as decided, taking the source, in one statement shared
   * with the charges recorded at the same moment. One commit rather than two, and no charge is ever
   * stored mid-call. Undefined when the source is not free, or was taken meanwhile: the usual path
   * then explains.
   */
  async function createDecidedFirst(
    scope: Scope,
    asked: charges.NewCharge,
    processor: Processor,
    baseUrl: string,
  ): Promise<ChargeView | undefined> {
    const source = await readFreeSource({ scope, id: asked.source_id })
    if (!source) return undefined
    const createdAt = timestampNow(source.updated_at)
    const charge = charges.recordedCharge(scope, asked, createdAt)
    const request = await paymentRequest(charge, source, source)
    const outcome = await callAuthorize(processor, () => processor.authorize(request))
    const taken: SourceRow = { ...source, used: true, updated_at: createdAt }
    const { settled, view } = settleAuthorization(scope, charge, taken, outcome, baseUrl)
    if (!(await recordDecided(Object.assign(settled, { asked, createdAt })))) return undefined
    events.stored(settled.event)
    return view
  }

  /**
   * An authorization the processor gave no answer to. One that decides in process cannot have
   * done anything meanwhile; nor one that refused the request or was never reached, when this was
   * the first call for the charge: then the charge is simply declined. Any other may have
   * authorized it, so the charge fails and the authorization is reversed. `repeated`: an earlier
   * call for the charge may have reached the processor (a repeat after a process died, a payer's
   * answer to a step it began), so a refusal of this one says nothing of what it holds.
   */
  function processorFailure(processor: Processor, err: ProcessorError, repeated = false): Learned {
    const failure = {
      code: err.kind === 'timeout' ? 'processor_timeout' : 'processor_unavailable',
      reason: `The payment processor ${PROCESSOR_FAULT[err.kind]}`,
      next_steps: 'Retry with a new source; nothing is taken, and any amount the processor held is released',
      provider_response: { error: err.kind },
    }
    const didNothing = holdsNothing(processor) || (err.didNothing && !repeated)
    return didNothing ? { outcome: 'declined', failure } : { outcome: 'unknown', failure }
  }

  async function callAuthorize<T>(
    processor: Processor,
    call: () => Promise<T>,
    repeated = false,
  ): Promise<T | Learned> {
    try {
      return await call()
    } catch (err) {
      if (err instanceof ProcessorError) return processorFailure(processor, err, repeated)
      throw err
    }
  }

  /**
   * The source a charge takes when the one-statement path did not: checks the customer that owns a
   * vaulted source, and consumes a single-use one, explaining a refusal.
   */
  async function takeSource(tx: Queryable, scope: Scope, input: CreateChargeInput): Promise<SourceRow> {
    const source = await sources.getSource(tx, scope, input.source)
    if (!source) throw new AppError('resource_missing', `No such source: '${input.source}'`, { param: 'source' })
    if (input.customer !== undefined) {
      if (!(await getCustomer(tx, scope, input.customer))) {
        throw new AppError('resource_missing', `No such customer: '${input.customer}'`, { param: 'customer' })
      }
      if (source.customer_id !== input.customer) {
        throw new AppError('customer_source_mismatch', `The source ${source.id} does not belong to ${input.customer}`, {
          param: 'customer',
        })
      }
    } else if (source.customer_id !== null) {
      throw new AppError(
        'customer_source_mismatch',
        `The source ${source.id} is saved to a customer; pass that customer to charge it`,
        { param: 'customer' },
      )
    }
    let current = source
    if (!source.vaulted) {
      const consumed = await sources.consumeSource(tx, scope, source.id)
      if (!consumed) {
        throw new AppError('source_used', `The source ${source.id} has already been used`, { param: 'source' })
      }
      current = consumed
    }

    return current
  }

  /** Account names change seldom; a charge's default descriptor need not read one each time. */
  const descriptors = new Map<string, { text: string; until: number }>()
  async function defaultDescriptor(q: Queryable, accountId: string): Promise<string> {
    const cached = descriptors.get(accountId)
    if (cached && cached.until > Date.now()) return cached.text
    const text = descriptorFrom((await findAccount(q, accountId))?.name ?? '')
    if (descriptors.size > 10_000) descriptors.clear()
    descriptors.set(accountId, { text, until: Date.now() + 60_000 })
    return text
  }

  async function create(
    scope: Scope,
    input: CreateChargeInput,
    baseUrl: string,
    idempotencyKey?: string,
  ): Promise<ChargeView> {
    const processor = processorFor(scope.livemode)
    const [violation, ...more] = chargeBodyViolations(input)
    if (violation) throw invalidParams([violation, ...more])
    const currency = normalizeCurrency(input.currency) as string

    // a retry of a request whose process died: carry on with the charge it made
    if (idempotencyKey) {
      const earlier = await charges.getChargeByKey(db, scope, idempotencyKey)
      if (earlier) return finishInterrupted(scope, earlier, baseUrl)
    }

    const fields: charges.NewCharge = {
      id: newId('charge'),
      source_id: input.source,
      customer_id: input.customer ?? null,
      amount: input.amount,
      currency,
      description: input.description ?? '',
      statement_descriptor: input.statement_descriptor ?? (await defaultDescriptor(db, scope.accountId)),
      capture: input.capture ?? true,
      require_auth: input.require_auth ?? true,
      metadata: input.metadata ?? {},
      idempotency_key: idempotencyKey ?? null,
    }
    // Most charges take a fresh single-use source. Through a processor that decides in process,
    // such a charge is decided first and stored once; through any other, one statement takes the
    // source and records the charge before the call. A source that is not free (vaulted, used,
    // missing) never becomes free, and goes the longer way, which explains.
    const singleUse = input.customer === undefined
    if (singleUse && processor.decidesInProcess) {
      const decided = await createDecidedFirst(scope, fields, processor, baseUrl)
      if (decided) return decided
    }
    const fast = singleUse && !processor.decidesInProcess ? await takeFreeSource({ scope, charge: fields }) : undefined
    let charge: ChargeRow
    let source: SourceRow
    let secrets: sources.SourceSecrets | undefined
    if (fast) {
      ;({ charge, source } = fast)
      secrets = fast.source
    } else {
      ;({ charge, source } = await db.transaction(async (tx) => {
        const current = await takeSource(tx, scope, input)
        return { charge: await charges.insertCharge(tx, scope, fields), source: current }
      }))
    }

    const request = await paymentRequest(charge, source, secrets)
    const outcome = await callAuthorize(processor, () => processor.authorize(request))
    return applyAuthorization(scope, charge, source, outcome, baseUrl)
  }

  async function get(scope: Scope, id: string): Promise<ChargeView> {
    const row = await charges.getCharge(db, scope, id)
    if (!row) throw notFound('charge', id)
    return load(db, row)
  }

  /** A page of charges as their ids and versions; `views` reads those a caller has not rendered. */
  async function list(scope: Scope, page: PageRequest): Promise<Page<charges.ChargeVersion>> {
    const found = await listVersions({ scope, page })
    if (!found) throw new CursorNotFound()
    return found
  }

  async function views(scope: Scope, ids: string[]): Promise<Versioned<ChargeView>[]> {
    return (await charges.chargesWithDetails(db, scope, ids)).map((d) => ({
      id: d.charge.id,
      version: d.version,
      view: chargeView(d.charge, d.source, d.refunds),
    }))
  }

  /**
   * Marks an operation as under way on a locked charge, after the state machine allows it, so a
   * concurrent second operation is refused; the processor is called after this commits. A retry
   * of the request that began the operation (same Idempotency-Key) gets `resumed` instead.
   */
  async function begin(
    scope: Scope,
    id: string,
    operation: string,
    check: (c: ChargeState & ChargeRow) => void,
    key: string | undefined,
  ): Promise<{ row: ChargeRow; resumed: boolean }> {
    return db.transaction(async (tx) => {
      const row = await charges.getCharge(tx, scope, id, true)
      if (!row) throw notFound('charge', id)
      if (key !== undefined && row.operation_key === key) return { row, resumed: true }
      check(row)
      return {
        row: await charges.patchCharge(tx, id, { processing: operation, operation_key: key ?? null }),
        resumed: false,
      }
    })
  }

  /**
   * A capture or void the processor gave no answer to. It may have acted all the same, so the
   * operation stays under way, named on the charge with its key: the recovery sweep sends it
   * again (the authorization's reference makes that safe) until the processor answers, and a
   * retry with the same Idempotency-Key sends it at once. Only a first call that the processor
   * refused (4xx) or that never reached it surely did nothing, and a fault of the service's own did
   * nothing at the processor; then the charge is let go as it was, with its key. A `repeated` call
   * follows one that may have reached the processor: its refusal says nothing of that one.
   */
  async function unanswered(id: string, what: string, err: unknown, repeated: boolean): Promise<never> {
    if (err instanceof ProcessorError && (repeated || !err.didNothing)) {
      throw new AppError(
        'processor_error',
        `The payment processor gave no answer to the ${what} (${err.kind}); it is sent again in the background until it answers, and the charge then shows the outcome`,
      )
    }
    await charges.patchCharge(db, id, { processing: null, operation_key: null })
    if (err instanceof ProcessorError) {
      const fault = err.kind === 'refused' ? `refused the ${what} request` : `could not be reached for the ${what}`
      throw new AppError('processor_error', `The payment processor ${fault}; nothing changed`)
    }
    throw err
  }

  /** The processor refused: not a fault of the service, so a 400 the client can act on. */
  async function declinedOperation(id: string, what: string, failure: { reason: string }): Promise<never> {
    await charges.patchCharge(db, id, { processing: null, operation_key: null })
    throw new AppError('processor_declined', `The processor refused the ${what}: ${failure.reason}`)
  }

  /** `capture:<amount>`: the intent names the amount, so a recovery can finish it. */
  const captureIntent = (amount: number) => `capture:${amount}`

  async function runCapture(scope: Scope, row: ChargeRow, amount: number, repeated: boolean): Promise<ChargeView> {
    let outcome: Awaited<ReturnType<Processor['capture']>>
    try {
      outcome = await processorFor(scope.livemode).capture(row.processor_ref ?? '', amount, row.currency)
    } catch (err) {
      return unanswered(row.id, 'capture', err, repeated)
    }
    if (outcome.outcome === 'declined') return declinedOperation(row.id, 'capture', outcome.failure)
    return db.transaction(async (tx) => {
      const patch = { captured: true, amount, processing: null }
      return (await record(tx, scope, row.id, patch, 'charge.captured')).view
    })
  }

  async function runVoid(scope: Scope, row: ChargeRow, repeated: boolean): Promise<ChargeView> {
    let outcome: Awaited<ReturnType<Processor['void']>>
    try {
      outcome = await processorFor(scope.livemode).void(row.processor_ref ?? '')
    } catch (err) {
      return unanswered(row.id, 'void', err, repeated)
    }
    if (outcome.outcome === 'declined') return declinedOperation(row.id, 'void', outcome.failure)
    return db.transaction(async (tx) => {
      const patch = { status: 'voided' as const, authorized: false, processing: null }
      return (await record(tx, scope, row.id, patch, 'charge.voided')).view
    })
  }

  async function capture(scope: Scope, id: string, amount: number | undefined, key?: string): Promise<ChargeView> {
    const { row, resumed } = await begin(
      scope,
      id,
      captureIntent(amount ?? 0),
      (c) => refuse(canCapture(c, amount)),
      key,
    )
    if (resumed) return finishInterrupted(scope, row, '')
    const toCapture = amount ?? row.amount
    if (amount === undefined) await charges.patchCharge(db, id, { processing: captureIntent(toCapture) })
    return runCapture(scope, row, toCapture, false)
  }

  async function voidCharge(scope: Scope, id: string, key?: string): Promise<ChargeView> {
    const { row, resumed } = await begin(scope, id, 'void', (c) => refuse(canVoid(c)), key)
    if (resumed) return finishInterrupted(scope, row, '')
    return runVoid(scope, row, false)
  }

  /**
   * The refund is recorded pending, and its amount reserved on the locked charge, before the
   * processor is called; concurrent refunds therefore can never add up past the amount.
   */
  async function refund(
    scope: Scope,
    id: string,
    input: { amount?: number | undefined; reason?: string | undefined },
    key?: string,
  ): Promise<ChargeView> {
    const reserved = await db.transaction(async (tx) => {
      const row = await charges.getCharge(tx, scope, id, true)
      if (!row) throw notFound('charge', id)
      // a retry of a refund whose process died: the refund is already recorded
      const earlier = key ? await charges.getRefundByKey(tx, id, key) : undefined
      if (earlier) return { refund: earlier, resumed: true }
      refuse(canRefund(row, input.amount))
      const amount = input.amount ?? row.amount - row.amount_refunded
      const refund = await charges.insertRefund(tx, {
        id: newId('refund'),
        charge_id: id,
        amount,
        currency: row.currency,
        reason: input.reason ?? DEFAULT_REFUND_REASON,
        idempotency_key: key ?? null,
      })
      // the amount is held at once; the status changes, with its event, when the processor answers
      await charges.patchCharge(tx, id, { amount_refunded: row.amount_refunded + amount })
      return { refund, resumed: false }
    })
    if (reserved.resumed && reserved.refund.status !== 'pending') return get(scope, id)
    return settleRefund(scope, reserved.refund)
  }

  /**
   * Asks the processor for a recorded refund and records its answer. When the processor cannot
   * be reached the refund stays pending and the recovery sweep asks again (the refund id makes
   * the request idempotent at the processor).
   */
  async function settleRefund(scope: Scope, refund: RefundRow): Promise<ChargeView> {
    const charge = (await charges.getCharge(db, scope, refund.charge_id)) as ChargeRow
    let ok: boolean
    try {
      const outcome = await processorFor(scope.livemode).refund(
        charge.processor_ref ?? '',
        refund.amount,
        refund.currency,
        refund.id,
      )
      ok = outcome.outcome === 'succeeded'
    } catch (err) {
      if (!(err instanceof ProcessorError)) throw err
      return get(scope, refund.charge_id)
    }
    return db.transaction(async (tx) => {
      const current = (await charges.getCharge(tx, scope, refund.charge_id, true)) as ChargeRow
      const settled = await charges.setRefundStatus(tx, refund.id, ok ? 'succeeded' : 'failed')
      if (!settled) return load(tx, current)
      // a failed refund gives its reservation back
      const refunded = ok ? current.amount_refunded : current.amount_refunded - refund.amount
      const patch = { amount_refunded: refunded, status: statusAfterRefunds(current, refunded) }
      return (await record(tx, scope, refund.charge_id, patch, ok ? 'charge.refunded' : 'charge.refund_failed')).view
    })
  }

  /**
   * Finishes what a dead process left under way on a charge: an authorization it had not sent or
   * recorded is sent again (the charge id identifies it to the processor), a capture or void is
   * made again, and a payer's answer that was being processed is let go so the payer can answer
   * again.
   */
  async function finishInterrupted(scope: Scope, row: ChargeRow, baseUrl: string): Promise<ChargeView> {
    const op = row.processing
    if (!op) return load(db, row)
    const url = baseUrl || deps.publicUrl || ''
    if (op === 'authorize' && !row.action) {
      const source = (await sources.getSource(db, scope, row.source_id)) as SourceRow
      const processor = processorFor(scope.livemode)
      const outcome = await callAuthorize(
        processor,
        async () => processor.authorize(await paymentRequest(row, source)),
        true,
      )
      return applyAuthorization(scope, row, source, outcome, url)
    }
    // the operation was begun before: its first call may have reached the processor
    if (op.startsWith('capture:')) {
      return runCapture(scope, row, Number(op.slice('capture:'.length)) || row.amount, true)
    }
    if (op === 'void') return runVoid(scope, row, true)
    return load(db, await charges.patchCharge(db, row.id, { processing: null }))
  }

  /**
   * Fails the charges whose payer has not answered within `timeoutMs` (a 3-D Secure page, a wallet
   * or QR approval, an OTP never given): the source's security code is erased with the decision, and
   * the payer's page shows the outcome. Answers how many it failed.
   */
  async function expireAbandoned(timeoutMs: number): Promise<number> {
    return eachAtOnce(await charges.claimAbandoned(db, timeoutMs), async (row) => {
      const scope = { accountId: row.account_id, livemode: row.livemode }
      const source = (await sources.getSource(db, scope, row.source_id)) as SourceRow
      // a processor elsewhere may hold something for the charge (a payer's step it took): cancel it;
      // with no live processor configured any more there is none to ask
      const failure = payerTimedOut(timeoutMs)
      const outcome = holdsNothing(configuredProcessor(row.livemode)) ? 'declined' : 'unknown'
      await applyAuthorization(scope, row, source, { outcome, failure }, '')
    })
  }

  /** One pass of the recovery sweep; answers how many operations it finished. */
  async function recoverInterrupted(graceMs: number): Promise<number> {
    const interrupted = await eachAtOnce(await charges.claimInterrupted(db, graceMs), (row) =>
      finishInterrupted({ accountId: row.account_id, livemode: row.livemode }, row, '').catch(() => {}),
    )
    const reversed = await eachAtOnce(await charges.claimReversalsOwed(db, graceMs), (owed) =>
      reverseUnlearned({ accountId: owed.account_id, livemode: owed.livemode }, owed.id),
    )
    const refunded = await eachAtOnce(await charges.claimPendingRefunds(db, graceMs), async (refund) => {
      const owner = await charges.getChargeById(db, refund.charge_id)
      if (owner) await settleRefund({ accountId: owner.account_id, livemode: owner.livemode }, refund).catch(() => {})
    })
    return interrupted + reversed + refunded
  }

  /**
   * The payer's answer to a pending charge: from the hosted page, the test-mode endpoint or the
   * OTP step. `authorizeStep` checks that the answer fits the step the charge waits for.
   */
  async function answer(
    scope: Scope,
    id: string,
    payer: PayerAnswer,
    authorizeStep: (c: ChargeRow, action: StoredAction) => void,
    baseUrl: string,
  ): Promise<ChargeView> {
    const { row } = await begin(
      scope,
      id,
      'authorize',
      (c) => {
        if (c.status === 'pending' && c.processing) {
          throw new AppError('charge_not_pending', 'An answer to this charge is already being processed')
        }
        if (!isAwaitingPayer(c) || !c.action) {
          throw new AppError('charge_not_pending', `A ${c.status} charge is not waiting for the payer`)
        }
        authorizeStep(c, c.action as unknown as StoredAction)
      },
      undefined,
    )
    const action = row.action as unknown as StoredAction
    const source = (await sources.getSource(db, scope, row.source_id)) as SourceRow
    const processor = processorFor(scope.livemode)
    let outcome: Learned | { outcome: 'otp_invalid' }
    try {
      outcome = await processor.completeStep(
        await paymentRequest(row, source),
        row.processor_ref ?? '',
        action.step,
        payer,
      )
    } catch (err) {
      if (!(err instanceof ProcessorError)) {
        await charges.patchCharge(db, id, { processing: null })
        throw err
      }
      outcome = processorFailure(processor, err, true)
    }
    if (outcome.outcome === 'otp_invalid') {
      const attempts = row.otp_attempts + 1
      if (attempts >= MAX_OTP_ATTEMPTS) {
        return applyAuthorization(
          scope,
          { ...row, otp_attempts: attempts },
          source,
          {
            outcome: 'declined',
            failure: {
              code: 'otp_attempts_exceeded',
              reason: `The one-time password was wrong ${attempts} times`,
              next_steps: 'Start a new payment',
              provider_response: {},
            },
          },
          baseUrl,
        )
      }
      await charges.patchCharge(db, id, { processing: null, otp_attempts: attempts })
      throw new AppError(
        'otp_invalid',
        `The one-time password is not correct; ${MAX_OTP_ATTEMPTS - attempts} tries left`,
        {
          param: 'otp',
        },
      )
    }
    // authorized, declined, or (a processor may ask for one more step) another action
    return applyAuthorization(scope, row, source, outcome, baseUrl)
  }

  async function verify(
    scope: Scope,
    id: string,
    input: { confirmation_id: string; otp: string },
    baseUrl: string,
  ): Promise<ChargeView> {
    return answer(
      scope,
      id,
      { otp: input.otp },
      (_c, action) => {
        if (action.step !== 'otp') {
          throw new AppError('charge_not_verifiable', 'This charge waits for the payer at a hosted page, not an OTP')
        }
        if (action.confirmation_id !== input.confirmation_id) {
          throw new AppError('confirmation_id_invalid', 'confirmation_id does not match the charge', {
            param: 'confirmation_id',
          })
        }
      },
      baseUrl,
    )
  }

  /** Test mode only: moves a charge past its hosted page as if the payer had answered there. */
  async function testDecide(scope: Scope, id: string, approve: boolean, baseUrl: string): Promise<ChargeView> {
    if (scope.livemode) throw new AppError('test_mode_only', 'This endpoint works with test keys only')
    return answer(scope, id, { approve }, (_c, action) => hostedStepOnly(action), baseUrl)
  }

  function hostedStepOnly(action: StoredAction) {
    if (action.step === 'otp') {
      throw new AppError('charge_not_pending', 'This charge waits for an OTP: use POST /v2/charges/:id/verify')
    }
  }

  /** The hosted page: found by id, opened by its token, never by an API key. */
  async function hostedCharge(id: string, token: string) {
    const row = await charges.getChargeById(db, id)
    if (!row?.action_token || !timingSafeEqualText(row.action_token, token)) return undefined
    const scope = { accountId: row.account_id, livemode: row.livemode }
    const source = (await sources.getSource(db, scope, row.source_id)) as SourceRow
    const account = await findAccount(db, row.account_id)
    return {
      row,
      scope,
      source,
      accountName: account?.name ?? '',
      step: (row.action as unknown as StoredAction | null)?.step,
    }
  }

  async function hostedAnswer(id: string, token: string, approve: boolean, baseUrl: string) {
    const found = await hostedCharge(id, token)
    if (!found) return undefined
    const view = await answer(
      found.scope,
      id,
      { approve },
      (c, action) => {
        // the token could have been replaced since the page was found
        if (c.action_token !== token) throw notFound('charge', id)
        hostedStepOnly(action)
      },
      baseUrl,
    )
    return { view, source: found.source }
  }

  return {
    create,
    get,
    list,
    views,
    capture,
    void: voidCharge,
    refund,
    verify,
    testDecide,
    hostedCharge,
    hostedAnswer,
    recoverInterrupted,
    expireAbandoned,
    settled,
  }
}

export type ChargeService = ReturnType<typeof chargeService>

/**
 * The rule of a charge's body that its schema cannot state: the currency is one ISO 4217 knows. It
 * reads the body as it came, so that a refused body's answer names this problem as well as the
 * schema's.
 */
export function chargeBodyViolations(body: unknown): Violation[] {
  const currency = typeof body === 'object' && body !== null ? (body as { currency?: unknown }).currency : undefined
  if (typeof currency !== 'string' || normalizeCurrency(currency)) return []
  return [{ code: 'parameter_invalid', param: 'currency', msg: 'currency is not the ISO 4217 code of a currency' }]
}
