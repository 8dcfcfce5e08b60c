import { authorizations } from './authorization.js'
import { captureAndVoid } from './capture-void.js'
import { type ChargeDeps, chargeContext } from './context.js'
import { chargeCreation } from './create.js'
import { payerSteps } from './payer-step.js'
import { recovery } from './recovery.js'
import { refunds } from './refund.js'
import { chargeViews } from './views.js'

export type { ChargeDeps, HostedPageUrl, Processors } from './context.js'
export { chargeBodyViolations, descriptorFrom } from './create.js'
export type { HostedAnswer, HostedChargeView } from './payer-step.js'

/**
 * The use cases of a charge, one file each: create (create.ts), the payer's step (payer-step.ts),
 * capture and void (capture-void.ts), refund (refund.ts), the recovery sweep (recovery.ts) and
 * reading (views.ts). What they share is in authorization.ts and context.ts.
 */
export function chargeService(deps: ChargeDeps) {
  const ctx = chargeContext(deps)
  const auth = authorizations(ctx)
  const operations = captureAndVoid(ctx)
  const refunding = refunds(ctx)
  const sweep = recovery(ctx, auth, operations, refunding)
  const { create } = chargeCreation(ctx, auth, sweep.finishInterrupted)
  const { get, list } = chargeViews(deps.db)
  const steps = payerSteps(ctx, auth, operations)
  return {
    create,
    get,
    list,
    capture: operations.capture,
    void: operations.void,
    refund: refunding.refund,
    verify: steps.verify,
    testDecide: steps.testDecide,
    hostedCharge: steps.hostedCharge,
    hostedAnswer: steps.hostedAnswer,
    recoverInterrupted: sweep.recoverInterrupted,
    expireAbandoned: sweep.expireAbandoned,
    waitForReversals: auth.waitForReversals,
  }
}

export type ChargeService = ReturnType<typeof chargeService>
