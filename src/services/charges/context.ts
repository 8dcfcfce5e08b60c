import type { Vault } from '../../crypto/vault.js'
import type { Refusal } from '../../domain/charge-state.js'
import { AppError } from '../../errors.js'
import type { AuthorizeOutcome, FailureData, PayerStep, Processor } from '../../processor/processor.js'
import type { Db } from '../../store/db.js'
import type { EventRecorder } from '../events.js'

export interface Processors {
  test: Processor
  live?: Processor | undefined
}

/** The address of a charge's hosted page, with the token that opens it; the routes make it. */
export type HostedPageUrl = (chargeId: string, token: string) => string

export interface ChargeDeps {
  db: Db
  vault: Vault
  processors: Processors
  events: EventRecorder
  /** hosted-page addresses made outside a request (the recovery sweep finishing an authorization) */
  hostedPageUrl: HostedPageUrl
  /**
   * How long a payer may take to answer, by the account's time: the recovery sweep then fails the
   * charge, and an answer is refused from then on, before the sweep has come to it
   */
  payerTimeoutMs?: number | undefined
}

/** The payer step and how the charge shows it, kept with the charge while it is pending. */
export interface StoredAction {
  type: 'redirect_to_url' | 'verify_otp'
  url?: string
  confirmation_id?: string
  step: PayerStep
}

/**
 * What the service knows of an authorization: the processor's answer, or `unknown`: a processor
 * elsewhere may hold an authorization for the charge that the service will never hear of (no
 * answer came, or the payer abandoned a step the processor had begun). The charge then fails,
 * and is reversed at the processor.
 */
export type AuthorizationResult = AuthorizeOutcome | { outcome: 'unknown'; failure: FailureData }

/** The dependencies every use case of a charge shares. */
export interface ChargeContext extends ChargeDeps {
  /** the processor of a mode, if one is configured */
  configuredProcessor(livemode: boolean): Processor | undefined
  /** the processor of a mode; refuses a live call with none configured */
  processorFor(livemode: boolean): Processor
}

export function chargeContext(deps: ChargeDeps): ChargeContext {
  const configuredProcessor = (livemode: boolean) => (livemode ? deps.processors.live : deps.processors.test)
  return {
    ...deps,
    configuredProcessor,
    processorFor(livemode) {
      const processor = configuredProcessor(livemode)
      if (!processor) {
        throw new AppError(
          'livemode_unavailable',
          'Live mode has no payment processor configured (JACKDAW_LIVE_PROCESSOR_URL); use a test key',
        )
      }
      return processor
    },
  }
}

/** A refusal of the charge's state machine as the API's error. */
export function refuse(r: Refusal | undefined): void {
  if (r) throw new AppError(r.code, r.message, r.code === 'amount_too_large' ? { param: 'amount' } : {})
}
