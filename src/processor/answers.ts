import { Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { withoutCardNumbers } from '../errors.js'
import {
  type AuthorizeOutcome,
  type FailureData,
  type OperationOutcome,
  type Processor,
  ProcessorError,
} from './processor.js'

/**
 * A processor's answers as the service takes them. What a processor answers is kept and shown
 * (the charge's `failure_data`, its events and notify calls): a connector's answer is checked
 * against the contract of processor.ts before anything of it is recorded, and card data a
 * gateway echoes back is taken out of it.
 */

/** A processor's reference for an authorization: a token, never card data. */
const Reference = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:-]+$' })
const CvcCheck = Type.Optional(Type.Enum(['pass', 'fail', 'unchecked']))
const Failure = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 100 }),
  reason: Type.String({ maxLength: 1000 }),
  next_steps: Type.String({ maxLength: 1000 }),
  provider_response: Type.Record(Type.String(), Type.Unknown()),
})
const BankAccount = Type.Object({
  reference_id: Type.String({ minLength: 1, maxLength: 100 }),
  bank_type: Type.String({ maxLength: 100 }),
  bank_code: Type.String({ maxLength: 100 }),
  account_name: Type.String({ maxLength: 255 }),
  account_number: Type.String({ maxLength: 100 }),
  account_type: Type.String({ maxLength: 100 }),
  expires_at: Type.String({ maxLength: 40 }),
})
const STEPS = ['three_d_secure', 'wallet', 'card_scheme', 'qr', 'bank', 'otp']

const AuthorizeAnswerSchema = Type.Union([
  Type.Object({
    outcome: Type.Literal('authorized'),
    reference: Reference,
    cvcCheck: CvcCheck,
    bankAccount: Type.Optional(BankAccount),
  }),
  Type.Object({
    outcome: Type.Literal('action_required'),
    reference: Reference,
    step: Type.Enum(STEPS),
    cvcCheck: CvcCheck,
  }),
  Type.Object({
    outcome: Type.Literal('declined'),
    reference: Type.Optional(Reference),
    failure: Failure,
    cvcCheck: CvcCheck,
  }),
])
// compiled once: every processor call is checked
const AuthorizeAnswer = Compile(AuthorizeAnswerSchema)
const StepAnswer = Compile(Type.Union([AuthorizeAnswerSchema, Type.Object({ outcome: Type.Literal('otp_invalid') })]))
const OperationAnswer = Compile(
  Type.Union([
    Type.Object({ outcome: Type.Literal('succeeded') }),
    Type.Object({ outcome: Type.Literal('declined'), failure: Failure }),
  ]),
)

/** The most of a processor's own details kept with a decline; a larger answer keeps none. */
export const MAX_PROVIDER_RESPONSE_LENGTH = 8_000

/** Keys under which a gateway's answer carries card data, whatever their value looks like. */
const CARD_DATA_KEY = /^(cvc2?|cvv2?|cid|csc|security_?code|card_?number|pan|number)$/i
const REDACTED = '[redacted]'

/** A text without card numbers, nor the security code sent with the request. */
function scrubbedText(text: string, securityCode: string | undefined): string {
  const scrubbed = withoutCardNumbers(text)
  return securityCode ? scrubbed.replace(new RegExp(`(?<!\\d)${securityCode}(?!\\d)`, 'g'), REDACTED) : scrubbed
}

/** A gateway's own details with the card data in them taken out, at any depth. */
function scrubbed(value: unknown, securityCode: string | undefined): unknown {
  if (typeof value === 'string') return scrubbedText(value, securityCode)
  if (typeof value === 'number') {
    const text = String(value)
    return scrubbedText(text, securityCode) === text ? value : REDACTED
  }
  if (Array.isArray(value)) return value.map((v) => scrubbed(v, securityCode))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) {
      out[scrubbedText(key, securityCode)] = CARD_DATA_KEY.test(key) ? REDACTED : scrubbed(v, securityCode)
    }
    return out
  }
  return value
}

function scrubbedFailure(failure: FailureData, securityCode: string | undefined): FailureData {
  const details = scrubbed(failure.provider_response, securityCode) as Record<string, unknown>
  return {
    code: scrubbedText(failure.code, securityCode),
    reason: scrubbedText(failure.reason, securityCode),
    next_steps: scrubbedText(failure.next_steps, securityCode),
    provider_response: JSON.stringify(details).length > MAX_PROVIDER_RESPONSE_LENGTH ? {} : details,
  }
}

/** An account number as the API shows it: its last four digits. */
const masked = (accountNumber: string) => `******${accountNumber.replace(/\D/g, '').slice(-4)}`

function checked<T>(validator: { Check(value: unknown): boolean }, answer: unknown, call: string): T {
  if (!validator.Check(answer))
    throw new ProcessorError('failed', `processor ${call}: not an answer the contract allows`)
  const reference = (answer as { reference?: string }).reference
  // a reference is kept in clear and sent back with every later call: it must not be card data
  if (reference !== undefined && withoutCardNumbers(reference) !== reference) {
    throw new ProcessorError('failed', `processor ${call}: the reference holds what looks like a card number`)
  }
  return answer as T
}

function checkedAuthorization<T extends AuthorizeOutcome | { outcome: 'otp_invalid' }>(
  answer: T,
  securityCode: string | undefined,
): T {
  if (answer.outcome === 'declined') return { ...answer, failure: scrubbedFailure(answer.failure, securityCode) }
  if (answer.outcome === 'authorized' && answer.bankAccount) {
    return {
      ...answer,
      bankAccount: { ...answer.bankAccount, account_number: masked(answer.bankAccount.account_number) },
    }
  }
  return answer
}

function checkedOperation(answer: unknown, call: string): OperationOutcome {
  const outcome = checked<OperationOutcome>(OperationAnswer, answer, call)
  return outcome.outcome === 'declined' ? { ...outcome, failure: scrubbedFailure(outcome.failure, undefined) } : outcome
}

/** The processor with its every answer checked and its card data taken out (see above). */
export function checkedProcessor(inner: Processor): Processor {
  return {
    get decidesInProcess() {
      return inner.decidesInProcess
    },
    async authorize(req) {
      const answer = checked<AuthorizeOutcome>(AuthorizeAnswer, await inner.authorize(req), 'authorize')
      return checkedAuthorization(answer, req.card?.cvc)
    },
    async completeStep(req, reference, step, payerAnswer) {
      const answer = await inner.completeStep(req, reference, step, payerAnswer)
      return checkedAuthorization(
        checked<AuthorizeOutcome | { outcome: 'otp_invalid' }>(StepAnswer, answer, 'complete-step'),
        req.card?.cvc,
      )
    },
    capture: async (reference, amount, currency) =>
      checkedOperation(await inner.capture(reference, amount, currency), 'capture'),
    void: async (reference) => checkedOperation(await inner.void(reference), 'void'),
    refund: async (reference, amount, currency, refundId) =>
      checkedOperation(await inner.refund(reference, amount, currency, refundId), 'refund'),
    reverse: async (chargeId) => checkedOperation(await inner.reverse(chargeId), 'reverse'),
  }
}
