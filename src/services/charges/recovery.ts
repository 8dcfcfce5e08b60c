import type { ChargeView } from '../../schemas/charge.js'
import {
  type ChargeRow,
  claimAbandoned,
  claimInterrupted,
  claimReversalsOwed,
  getChargeById,
  patchHeldCharge,
} from '../../store/charges.js'
import { claimPendingRefunds } from '../../store/refunds.js'
import type { Scope } from '../../store/scope.js'
import { getSourceWithCard, type SourceWithCard } from '../../store/sources.js'
import { type Authorizations, cannotHoldUnknown } from './authorization.js'
import type { CaptureAndVoid } from './capture-void.js'
import type { ChargeContext, HostedPageUrl } from './context.js'
import type { Refunds } from './refund.js'
import { currentView, loadView } from './views.js'

/** Charges a sweep fails at once, each claim of abandoned charges. */
const ABANDONED_PER_CLAIM = 20

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

/**
 * Runs `fn` on every claimed item at once and answers how many there were. A sweep claims what it
 * finishes for the grace period only: one after another, a pass of calls to a processor that is
 * timing out would outlast that, and another process would claim and finish the same items again.
 */
async function eachAtOnce<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<number> {
  // every item is seen through before a failure is passed on: none is left running unwatched
  const results = await Promise.allSettled(items.map(fn))
  const failed = results.find((r) => r.status === 'rejected')
  if (failed) throw failed.reason
  return items.length
}

const scopeOf = (row: { account_id: string; livemode: boolean }): Scope => ({
  accountId: row.account_id,
  livemode: row.livemode,
})

export function recovery(ctx: ChargeContext, auth: Authorizations, operations: CaptureAndVoid, refunds: Refunds) {
  const { db } = ctx

  /**
   * Finishes what a dead process left under way on a charge: an authorization it had not sent or
   * recorded is sent again (the charge id identifies it to the processor), a capture or void is
   * made again, and a payer's answer that was being processed is let go so the payer can answer
   * again.
   */
  async function finishInterrupted(scope: Scope, row: ChargeRow, url: HostedPageUrl): Promise<ChargeView> {
    if (!row.processing) return loadView(db, row)
    if (row.processing === 'authorize' && !row.action) {
      const source = (await getSourceWithCard(db, scope, row.source_id)) as SourceWithCard
      return auth.authorize(scope, row, source, url, { repeated: true })
    }
    const resumed = operations.resume(scope, row)
    if (resumed) return resumed
    // a payer's answer still at work elsewhere may record its outcome all the same (store/authorization-outcomes.ts)
    const letGo = await patchHeldCharge(db, row, { processing: null })
    return letGo ? loadView(db, letGo) : currentView(db, scope, row.id)
  }

  /**
   * Fails the charges whose payer has not answered within `timeoutMs` (a 3-D Secure page, a wallet
   * or QR approval, an OTP never given): the source's card data is erased with the decision, and
   * the payer's page shows the outcome. Claims a few at a time until none is left, so that a test
   * clock moved on fails every charge it left overdue in the pass it asks for. Answers how many it
   * failed.
   */
  async function expireAbandoned(timeoutMs: number): Promise<number> {
    let failed = 0
    for (;;) {
      const claimed = await claimAbandoned(db, timeoutMs, ABANDONED_PER_CLAIM)
      failed += await eachAtOnce(claimed, async (row) => {
        const scope = scopeOf(row)
        const source = (await getSourceWithCard(db, scope, row.source_id)) as SourceWithCard
        // a processor elsewhere may hold something for the charge (a payer's step it took): cancel
        // it; with no live processor configured any more there is none to ask
        const failure = payerTimedOut(timeoutMs)
        const outcome = cannotHoldUnknown(ctx.configuredProcessor(row.livemode)) ? 'declined' : 'unknown'
        await auth.record(scope, row, source, { outcome, failure }, ctx.hostedPageUrl)
      })
      if (claimed.length < ABANDONED_PER_CLAIM) return failed
    }
  }

  /** One pass of the recovery sweep; answers how many operations it finished. */
  async function recoverInterrupted(graceMs: number): Promise<number> {
    const interrupted = await eachAtOnce(await claimInterrupted(db, graceMs), (row) =>
      finishInterrupted(scopeOf(row), row, ctx.hostedPageUrl).catch(() => {}),
    )
    const reversed = await eachAtOnce(await claimReversalsOwed(db, graceMs), (owed) =>
      auth.reverseUnknown(scopeOf(owed), owed.id),
    )
    const refunded = await eachAtOnce(await claimPendingRefunds(db, graceMs), async (refund) => {
      const charge = await getChargeById(db, refund.charge_id)
      if (charge) await refunds.settleRefund(scopeOf(charge), refund, charge).catch(() => {})
    })
    return interrupted + reversed + refunded
  }

  return { finishInterrupted, expireAbandoned, recoverInterrupted }
}
