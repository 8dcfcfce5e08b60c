import { hash } from 'node:crypto'
import { cardExpired, type TestCardOutcome, testCard } from '../domain/card.js'
import type {
  AuthorizeOutcome,
  FailureData,
  LinkedBankAccount,
  OperationOutcome,
  PayerAnswer,
  PayerStep,
  PaymentRequest,
  Processor,
} from './processor.js'
import { ProcessorError } from './processor.js'

/** The documented test OTPs of the bank-account flow (docs/testing.md). */
export const TEST_OTP_SUCCEEDS = '123456'
export const TEST_OTP_DECLINES = '000000'

const DECLINES: Partial<Record<TestCardOutcome, Omit<FailureData, 'provider_response'>>> = {
  generic_decline: {
    code: 'card_declined',
    reason: 'The card was declined',
    next_steps: 'Ask the payer to use another card or contact their bank',
  },
  insufficient_funds: {
    code: 'insufficient_funds',
    reason: 'The card has insufficient funds',
    next_steps: 'Ask the payer to use another card',
  },
  lost_card: {
    code: 'lost_card',
    reason: 'The card was reported lost',
    next_steps: 'Do not retry; ask for another payment method',
  },
  stolen_card: {
    code: 'stolen_card',
    reason: 'The card was reported stolen',
    next_steps: 'Do not retry; ask for another payment method',
  },
  expired_card: {
    code: 'expired_card',
    reason: 'The card has expired',
    next_steps: 'Ask the payer to use another card',
  },
  incorrect_cvc: {
    code: 'incorrect_cvc',
    reason: "The card's security code is incorrect",
    next_steps: 'Ask the payer to check the security code and pay again with a new source',
  },
  processing_error: {
    code: 'processing_error',
    reason: 'An error occurred while processing the card',
    next_steps: 'Retry with a new source',
  },
  authenticates_then_declines: {
    code: 'card_declined',
    reason: 'The card was declined after authentication',
    next_steps: 'Ask the payer to use another card',
  },
}

const NO_CARD_NUMBER = {
  code: 'card_declined',
  reason: 'The request carried no card number',
  next_steps: 'Charge a new source with the card',
}

const STEP_OF_TYPE: Record<string, PayerStep> = {
  wallet_a: 'wallet',
  wallet_b: 'wallet',
  wallet_c: 'wallet',
  wallet_d: 'wallet',
  wallet_e: 'wallet',
  cardscheme_a: 'card_scheme',
  qr_a: 'qr',
  transfer_a: 'bank',
}

function failure(f: Omit<FailureData, 'provider_response'>, extra: Record<string, unknown> = {}): FailureData {
  return { ...f, provider_response: { processor: 'simulator', decline_code: f.code, ...extra } }
}

function reference(req: PaymentRequest): string {
  return `sim_${hash('sha256', req.chargeId).slice(0, 24)}`
}

/** What a card comes to at `at`: a card past its expiry month is expired, whatever its number. */
function cardOutcome(card: NonNullable<PaymentRequest['card']>, at: string): TestCardOutcome {
  if (cardExpired(Number(card.expMonth), Number(card.expYear), new Date(at))) return 'expired_card'
  return testCard(card.number)?.outcome ?? 'succeeds'
}

/**
 * The test-mode payment simulator. It keeps no state: every answer follows from the request (the
 * test card, the source type, the payer's answer), so it survives restarts and runs anywhere,
 * in process or as a separate processor service.
 */
export class Simulator implements Processor {
  readonly decidesInProcess: boolean = true

  async authorize(req: PaymentRequest): Promise<AuthorizeOutcome> {
    const ref = reference(req)
    if (req.sourceType !== 'card') {
      if (req.sourceType === 'transfer_a' && req.bankLinked)
        return { outcome: 'action_required', reference: ref, step: 'otp' }
      return { outcome: 'action_required', reference: ref, step: STEP_OF_TYPE[req.sourceType] ?? 'wallet' }
    }
    // a card request without its number charges nothing: a processor declines it
    if (!req.card) return { outcome: 'declined', reference: ref, failure: failure(NO_CARD_NUMBER) }
    const outcome = cardOutcome(req.card, req.at)
    if (outcome === 'processor_timeout') throw new ProcessorError('timeout', 'the simulated processor did not answer')
    const needs3ds = outcome === 'requires_3ds' || outcome === 'authenticates_then_declines'
    if (needs3ds && req.requireAuth && !req.vaulted) {
      return { outcome: 'action_required', reference: ref, step: 'three_d_secure' }
    }
    return this.#decideCard(req, ref, outcome)
  }

  #decideCard(req: PaymentRequest, ref: string, outcome: TestCardOutcome): AuthorizeOutcome {
    const cvcCheck = req.card?.cvc === undefined ? 'unchecked' : outcome === 'incorrect_cvc' ? 'fail' : 'pass'
    // an issuer finds a security code incorrect only when it is sent one
    const decline = outcome === 'incorrect_cvc' && cvcCheck === 'unchecked' ? undefined : DECLINES[outcome]
    if (decline) return { outcome: 'declined', reference: ref, failure: failure(decline), cvcCheck }
    return { outcome: 'authorized', reference: ref, cvcCheck }
  }

  async completeStep(
    req: PaymentRequest,
    ref: string,
    step: PayerStep,
    answer: PayerAnswer,
  ): Promise<AuthorizeOutcome | { outcome: 'otp_invalid' }> {
    if (step === 'otp') {
      if (!('otp' in answer)) return { outcome: 'otp_invalid' }
      if (answer.otp === TEST_OTP_SUCCEEDS) return { outcome: 'authorized', reference: ref }
      if (answer.otp === TEST_OTP_DECLINES) {
        return {
          outcome: 'declined',
          reference: ref,
          failure: failure({
            code: 'debit_declined',
            reason: 'The bank declined the debit',
            next_steps: 'Ask the payer to pay with another method',
          }),
        }
      }
      return { outcome: 'otp_invalid' }
    }
    const approved = 'approve' in answer && answer.approve
    if (!approved) {
      const code = step === 'three_d_secure' ? 'authentication_failed' : 'payment_declined'
      const reason =
        step === 'three_d_secure' ? 'The payer failed 3-D Secure authentication' : 'The payer declined the payment'
      return {
        outcome: 'declined',
        reference: ref,
        failure: failure({ code, reason, next_steps: 'Ask the payer to try again' }),
      }
    }
    if (step === 'three_d_secure') {
      const outcome = req.card ? cardOutcome(req.card, req.at) : 'succeeds'
      return this.#decideCard(req, ref, outcome === 'requires_3ds' ? 'succeeds' : outcome)
    }
    // a payment approved after another linked the account keeps that account
    if (step === 'bank') {
      return { outcome: 'authorized', reference: ref, ...(req.bankLinked ? {} : { bankAccount: linkedAccount(req) }) }
    }
    return { outcome: 'authorized', reference: ref }
  }

  async capture(): Promise<OperationOutcome> {
    return { outcome: 'succeeded' }
  }

  async void(): Promise<OperationOutcome> {
    return { outcome: 'succeeded' }
  }

  async refund(): Promise<OperationOutcome> {
    return { outcome: 'succeeded' }
  }

  // it holds nothing, so there is never anything to cancel
  async reverse(_chargeId: string): Promise<OperationOutcome> {
    return { outcome: 'succeeded' }
  }
}

/** The payer's bank account as a first approved payment links it, for a year from the request. */
function linkedAccount(req: PaymentRequest): LinkedBankAccount {
  const digits = hash('sha256', req.chargeId).replace(/[a-f]/g, '').padEnd(4, '7')
  const expires = new Date(req.at)
  expires.setUTCFullYear(expires.getUTCFullYear() + 1)
  return {
    reference_id: `bnk_${hash('sha256', `link:${req.chargeId}`).slice(0, 24)}`,
    bank_type: 'transfer_a',
    bank_code: 'JDTB',
    account_name: req.holderName ?? 'Test Account Holder',
    account_number: `******${digits.slice(0, 4)}`,
    account_type: 'savings',
    // the API's form, to the microsecond of the request
    expires_at: `${expires.toISOString().slice(0, 23)}${req.at.slice(23, 26)}Z`,
  }
}
