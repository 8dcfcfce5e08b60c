import { timingSafeEqualText } from '../../crypto/vault.js'
import { isAwaitingPayer } from '../../domain/charge-state.js'
import { millisBetween, timestampNow } from '../../domain/time.js'
import { AppError, notFound } from '../../errors.js'
import { PROCESSOR_CALL_TIMEOUT_MS } from '../../processor/http-connector.js'
import { type PayerAnswer, type PayerStep, ProcessorError } from '../../processor/processor.js'
import type { ChargeView } from '../../schemas/charge.js'
import { type ChargeRow, getChargeById, patchHeldCharge } from '../../store/charges.js'
import type { Scope } from '../../store/scope.js'
import { getSourceWithCard, type SourceWithCard } from '../../store/sources.js'
import { accountNow } from '../../store/test-clocks.js'
import { type Authorizations, processorFailure } from './authorization.js'
import type { CaptureAndVoid } from './capture-void.js'
import type { AuthorizationResult, ChargeContext, HostedPageUrl, StoredAction } from './context.js'
import { currentView } from './views.js'

const MAX_OTP_ATTEMPTS = 3
// how long a second answer waits for the first to decide the charge: a processor's call, and
// the recording of its outcome
const DECISION_WAIT_MS = PROCESSOR_CALL_TIMEOUT_MS + 2_000
const DECISION_POLL_MS = 100

/** What the hosted page shows of a charge. */
export interface HostedChargeView {
  id: string
  status: ChargeView['status']
  livemode: boolean
  amount: number
  currency: string
  /** who is paid, as the payer's statement will name them: the charge's statement descriptor */
  merchant: string
  /** the step the payer has to take; absent once the charge is decided or the payer's time is up */
  step?: PayerStep | undefined
  /** the payer's time to answer has run out: the charge fails, if the recovery sweep has not failed it yet */
  expired: boolean
}

/** The charge once the hosted page is answered, and where the payer's browser goes then. */
export interface HostedAnswer {
  charge: ChargeView
  /** undefined while the charge waits still, or when neither the source nor the charge says */
  returnTo?: string | undefined
  /**
   * the answer came after the payer's time ran out: the charge, pending still until the recovery
   * sweep fails it, is as good as failed to the payer, who returns to the shop as from a failure
   */
  expired?: boolean
}

/**
 * Where a decided charge's payer returns: the source's own redirect for the outcome, else the
 * charge's `redirect_url`, told which charge and how it ended (as `charge` and `status`).
 * `status`: the outcome the payer is told, when it is not the charge's own yet.
 */
export function payerReturnAddress(
  charge: ChargeView,
  redirectUrl: string | null,
  status: ChargeView['status'] = charge.status,
): string | undefined {
  if (status === 'pending') return undefined
  const own = charge.source.redirect?.[status === 'succeeded' ? 'success' : 'fail']
  if (own) return own
  if (!redirectUrl) return undefined
  const address = new URL(redirectUrl)
  address.searchParams.set('charge', charge.id)
  address.searchParams.set('status', status)
  return address.href
}

const otpAttemptsExceeded = (attempts: number): AuthorizationResult => ({
  outcome: 'declined',
  failure: {
    code: 'otp_attempts_exceeded',
    reason: `The one-time password was wrong ${attempts} times`,
    next_steps: 'Start a new payment',
    provider_response: {},
  },
})

function hostedStepOnly(action: StoredAction) {
  if (action.step === 'otp') {
    throw new AppError('charge_not_pending', 'This charge waits for an OTP: use POST /v2/charges/:id/verify')
  }
}

export function payerSteps(ctx: ChargeContext, auth: Authorizations, operations: CaptureAndVoid) {
  const { db } = ctx
  const timeoutMs = ctx.payerTimeoutMs

  /** The account's time, by which a payer's time runs out; undefined when it never does. */
  const payerClock = async (scope: Scope) =>
    timeoutMs === undefined ? undefined : ((await accountNow(db, scope)) ?? timestampNow())

  /**
   * True of a charge waiting for its payer longer than the payer timeout, by `now` (payerClock):
   * the recovery sweep fails it (recovery.ts, expireAbandoned) and no answer is taken meanwhile.
   */
  const payerTimeRanOut = (c: ChargeRow, now: string | undefined) =>
    now !== undefined && isAwaitingPayer(c) && !!c.action && millisBetween(c.updated_at, now) > (timeoutMs as number)

  /**
   * The payer's answer to a pending charge: from the hosted page, the test-mode endpoint or the
   * OTP step. `authorizeStep` checks that the answer fits the step the charge waits for.
   */
  async function answer(
    scope: Scope,
    id: string,
    payer: PayerAnswer,
    authorizeStep: (c: ChargeRow, action: StoredAction) => void,
    url: HostedPageUrl,
  ): Promise<ChargeView> {
    const now = await payerClock(scope)
    const { row } = await operations.begin(
      scope,
      id,
      () => 'authorize',
      (c) => {
        if (c.status === 'pending' && c.processing) {
          throw new AppError('charge_not_pending', 'An answer to this charge is already being processed')
        }
        if (!isAwaitingPayer(c) || !c.action) {
          throw new AppError('charge_not_pending', `A ${c.status} charge is not waiting for the payer`)
        }
        if (payerTimeRanOut(c, now)) {
          throw new AppError('charge_not_pending', 'The time to answer this charge has run out: it is failing')
        }
        authorizeStep(c, c.action as unknown as StoredAction)
      },
      undefined,
    )
    const action = row.action as unknown as StoredAction
    const source = (await getSourceWithCard(db, scope, row.source_id)) as SourceWithCard
    const processor = ctx.processorFor(scope.livemode)
    let result: AuthorizationResult | { outcome: 'otp_invalid' }
    try {
      result = await processor.completeStep(
        auth.paymentRequest(row, source, now ?? (await accountNow(db, scope)) ?? timestampNow()),
        row.processor_ref ?? '',
        action.step,
        payer,
      )
    } catch (err) {
      if (!(err instanceof ProcessorError)) {
        await patchHeldCharge(db, row, { processing: null })
        throw err
      }
      result = processorFailure(processor, err, true)
    }
    if (result.outcome !== 'otp_invalid') return auth.record(scope, row, source, result, url)
    const attempts = row.otp_attempts + 1
    if (attempts >= MAX_OTP_ATTEMPTS) {
      return auth.record(scope, { ...row, otp_attempts: attempts }, source, otpAttemptsExceeded(attempts), url)
    }
    await patchHeldCharge(db, row, { processing: null, otp_attempts: attempts })
    throw new AppError(
      'otp_invalid',
      `The one-time password is not correct; ${MAX_OTP_ATTEMPTS - attempts} tries left`,
      {
        param: 'otp',
      },
    )
  }

  async function verify(
    scope: Scope,
    id: string,
    input: { confirmation_id: string; otp: string },
    url: HostedPageUrl,
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
      url,
    )
  }

  /** Test mode only: moves a charge past its hosted page as if the payer had answered there. */
  async function testDecide(scope: Scope, id: string, approve: boolean, url: HostedPageUrl): Promise<ChargeView> {
    if (scope.livemode) throw new AppError('test_mode_only', 'This endpoint works with test keys only')
    return answer(scope, id, { approve }, (_c, action) => hostedStepOnly(action), url)
  }

  /** The charge a hosted-page link names, when its token opens it; never found by an API key. */
  async function openedBy(id: string, token: string): Promise<ChargeRow | undefined> {
    const row = await getChargeById(db, id)
    if (!row?.action_token || !timingSafeEqualText(row.action_token, token)) return undefined
    return row
  }

  async function hostedCharge(id: string, token: string): Promise<HostedChargeView | undefined> {
    const row = await openedBy(id, token)
    if (!row) return undefined
    const expired = payerTimeRanOut(row, await payerClock({ accountId: row.account_id, livemode: row.livemode }))
    return {
      id: row.id,
      status: row.status,
      livemode: row.livemode,
      amount: row.amount,
      currency: row.currency,
      merchant: row.statement_descriptor,
      step: expired ? undefined : (row.action as unknown as StoredAction | null)?.step,
      expired,
    }
  }

  async function hostedAnswer(
    id: string,
    token: string,
    approve: boolean,
    url: HostedPageUrl,
  ): Promise<HostedAnswer | undefined> {
    const row = await openedBy(id, token)
    if (!row) return undefined
    const scope = { accountId: row.account_id, livemode: row.livemode }
    let charge: ChargeView
    try {
      charge = await answer(
        scope,
        id,
        { approve },
        (c, action) => {
          // the token could have been replaced since the page was found
          if (c.action_token !== token) throw notFound('charge', id)
          hostedStepOnly(action)
        },
        url,
      )
    } catch (err) {
      // a second submission (a double click, a second tab, a page left open) goes where the
      // answer that decided the charge went, once it has: the payer still returns to the shop
      if (!(err instanceof AppError) || err.code !== 'charge_not_pending') throw err
      const decided = await decidedView(scope, id)
      if (!decided) {
        // too late to answer, the sweep not yet through: the charge is failing
        const expired = await expiredAnswer(scope, id, row.redirect_url)
        if (!expired) throw err
        return expired
      }
      charge = decided
    }
    return { charge, returnTo: payerReturnAddress(charge, row.redirect_url) }
  }

  /**
   * The answer to a charge whose payer's time has run out, before the recovery sweep fails it:
   * the payer returns to the shop as from a failed payment, as they would once it has.
   */
  async function expiredAnswer(
    scope: Scope,
    id: string,
    redirectUrl: string | null,
  ): Promise<HostedAnswer | undefined> {
    const row = await getChargeById(db, id)
    if (!row || !payerTimeRanOut(row, await payerClock(scope))) return undefined
    const charge = await currentView(db, scope, id)
    return { charge, returnTo: payerReturnAddress(charge, redirectUrl, 'failed'), expired: true }
  }

  /** The charge once no longer pending, waiting while an answer to it is under way; else undefined. */
  async function decidedView(scope: Scope, id: string): Promise<ChargeView | undefined> {
    const until = Date.now() + DECISION_WAIT_MS
    for (;;) {
      const row = await getChargeById(db, id)
      if (row && row.status !== 'pending') return currentView(db, scope, id)
      if (!row?.processing || Date.now() >= until) return undefined
      await new Promise((resolve) => setTimeout(resolve, DECISION_POLL_MS))
    }
  }

  return { verify, testDecide, hostedCharge, hostedAnswer }
}
