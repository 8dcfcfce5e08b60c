import type { SourceType } from '../schemas/source.js'

/**
 * What the service asks of a payment processor. The test-mode simulator and a live connector both
 * stand behind this interface; the service never knows which one it talks to.
 */
export interface PaymentRequest {
  chargeId: string
  livemode: boolean
  sourceType: SourceType
  amount: number
  currency: string
  /** false skips 3-D Secure for a card, as the interface's `require_auth` says */
  requireAuth: boolean
  /** a saved source: no 3-D Secure, and a linked bank account confirms by OTP */
  vaulted: boolean
  card?: { number: string; cvc?: string | undefined; expMonth: string; expYear: string }
  /** a bank-transfer source whose account an earlier payment linked, and whose link has not expired */
  bankLinked: boolean
  holderName?: string | undefined
  /**
   * When the request is made, as an API timestamp: in test mode the account's time, which its test
   * clock may have moved on. A card is valid to the end of its expiry month.
   */
  at: string
}

export interface FailureData {
  code: string
  reason: string
  next_steps: string
  provider_response: Record<string, unknown>
}

export type CvcCheck = 'pass' | 'fail' | 'unchecked'

export interface LinkedBankAccount {
  reference_id: string
  bank_type: string
  bank_code: string
  account_name: string
  account_number: string
  account_type: string
  expires_at: string
}

/** Where the payer must go before the processor decides. */
export type PayerStep = 'three_d_secure' | 'wallet' | 'card_scheme' | 'qr' | 'bank' | 'otp'

export type AuthorizeOutcome =
  | { outcome: 'authorized'; reference: string; cvcCheck?: CvcCheck; bankAccount?: LinkedBankAccount }
  | { outcome: 'action_required'; reference: string; step: PayerStep; cvcCheck?: CvcCheck }
  | { outcome: 'declined'; reference?: string; failure: FailureData; cvcCheck?: CvcCheck }

export type PayerAnswer = { approve: boolean } | { otp: string }

export type OperationOutcome = { outcome: 'succeeded' } | { outcome: 'declined'; failure: FailureData }

export interface Processor {
  /**
   * True of a processor that answers from the request alone, in the service's own process, with
   * no effect anywhere (the test-mode simulator). It can hold no authorization the service has not
   * heard of: a call to it that fails is a decline, with nothing to reverse.
   */
  readonly decidesInProcess?: boolean
  /**
   * The charge id identifies the authorization: the recovery sweep sends one again when the
   * process that sent it died before recording its answer, so a processor must answer a repeat
   * with the first answer and never hold twice for one charge.
   */
  authorize(req: PaymentRequest): Promise<AuthorizeOutcome>
  /** The payer's answer at a hosted page, or an OTP; `otp_invalid` leaves the step open. */
  completeStep(
    req: PaymentRequest,
    reference: string,
    step: PayerStep,
    answer: PayerAnswer,
  ): Promise<AuthorizeOutcome | { outcome: 'otp_invalid' }>
  capture(reference: string, amount: number, currency: string): Promise<OperationOutcome>
  void(reference: string): Promise<OperationOutcome>
  refund(reference: string, amount: number, currency: string, refundId: string): Promise<OperationOutcome>
  /**
   * Cancels whatever the processor authorized for this charge, if it authorized anything: sent
   * when an authorization's outcome was never learned (no answer in time, a broken connection, a
   * 5xx), so that a charge recorded as failed leaves no hold on the payer's account. `succeeded`
   * when nothing for the charge remains held, whether or not there ever was a hold; any other
   * answer, or none, and it is sent again. From then on the processor must refuse any
   * authorization for the charge that still reaches it, so that one in flight cannot land after
   * its reversal.
   */
  reverse(chargeId: string): Promise<OperationOutcome>
}

/**
 * No outcome from the processor. `timeout`, `unavailable` (the connection broke, or failed in a
 * way that does not say whether the request left) and `failed` (a 5xx, or an answer that is not
 * one): what it did is unknown. `refused`: it answered that it did not take the request (a 4xx);
 * `unreachable`: no connection was ever made (refused, no such host, none in time), so the request
 * never left. Either way it did nothing.
 */
export class ProcessorError extends Error {
  constructor(
    readonly kind: 'timeout' | 'unavailable' | 'failed' | 'refused' | 'unreachable',
    message: string,
  ) {
    super(message)
    this.name = 'ProcessorError'
  }

  /** The processor surely did nothing with the request. */
  get didNothing(): boolean {
    return this.kind === 'refused' || this.kind === 'unreachable'
  }
}
