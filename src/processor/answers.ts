import { type TSchema, Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { redactCardNumbers } from '../domain/card.js'
import { asTimestamp } from '../domain/time.js'
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
// an optional member may also come as JSON's null, as a processor written in another language sends it
const OrNull = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))
const CvcCheck = OrNull(Type.Enum(['pass', 'fail', 'unchecked']))
const Failure = Type.Object({
  code: Type.String({ minLength: 1 }),
  reason: Type.String(),
  next_steps: Type.String(),
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
    bankAccount: OrNull(BankAccount),
  }),
  Type.Object({
    outcome: Type.Literal('action_required'),
    reference: Reference,
    step: Type.Enum(STEPS),
    cvcCheck: CvcCheck,
  }),
  Type.Object({
    outcome: Type.Literal('declined'),
    reference: OrNull(Reference),
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
/** Nor one nested deeper than this: scrubbing it, or writing it as JSON, would run out of stack. */
export const MAX_PROVIDER_RESPONSE_DEPTH = 64
const MAX_TEXT_LENGTH = 1000

/** Keys under which a gateway's answer carries card data, whatever their value looks like. */
const CARD_DATA_KEY = /cvc|cvv|csc|security[ _-]?code|card[ _-]?number|^pan$|^cid$/i
/**
 * A security code as a text names it: `cvc 123`, `card_cvv=1234`, `"cvc" : "123"`, `security code
 * is 123`, `CVV2 123`, `CID: 1234` (the four digits on the front of an American Express card).
 */
const LABELLED_CODE = /(cvc2?|cvv2?|csc2?|(?<![a-z])cid(?![a-z])|security[ _-]?code)([^0-9]{0,20}?)(\d{3,4})(?!\d)/gi
const REDACTED = '[redacted]'

/** The card of the request an answer is to: what a gateway may echo back. */
interface SentCard {
  number?: string | undefined
  cvc?: string | undefined
}

/** A text without card numbers (the card's own, and any other) or a security code it names. */
function scrubbedText(text: string, card: SentCard, max = MAX_TEXT_LENGTH): string {
  const scrubbed = redactCardNumbers(text, card.number).replace(LABELLED_CODE, `$1$2${REDACTED}`)
  return scrubbed.length > max ? `${scrubbed.slice(0, max - 1)}…` : scrubbed
}

/** A gateway's own details with the card data in them taken out, at any depth. */
function scrubbed(value: unknown, card: SentCard): unknown {
  // the request's own security code, whole, wherever it stands
  if ((typeof value === 'string' || typeof value === 'number') && card.cvc && String(value) === card.cvc) {
    return REDACTED
  }
  if (typeof value === 'string') return scrubbedText(value, card, Number.POSITIVE_INFINITY)
  if (typeof value === 'number') {
    const digits = String(Math.abs(value))
    return redactCardNumbers(digits, card.number) === digits ? value : REDACTED
  }
  if (Array.isArray(value)) return value.map((v) => scrubbed(v, card))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) {
      // defined, not assigned: a `__proto__` key stays a key
      Object.defineProperty(out, scrubbedText(key, card), {
        value: CARD_DATA_KEY.test(key) ? REDACTED : scrubbed(v, card),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  }
  return value
}

/**
 * Whether `value` is nested at most MAX_PROVIDER_RESPONSE_DEPTH deep and its JSON may fit in
 * MAX_PROVIDER_RESPONSE_LENGTH (counting a part of its characters), looked at without recursion.
 */
function mayFit(value: unknown): boolean {
  let length = 0
  const pending: [unknown, number][] = [[value, 0]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [v, depth] = next
    if (depth > MAX_PROVIDER_RESPONSE_DEPTH) return false
    if (typeof v === 'string') length += v.length + 2
    else if (Array.isArray(v)) {
      length += 1 + v.length
      if (length > MAX_PROVIDER_RESPONSE_LENGTH) return false
      for (const inner of v) pending.push([inner, depth + 1])
    } else if (v !== null && typeof v === 'object') {
      length += 1
      for (const key in v) {
        length += key.length + 4
        if (length > MAX_PROVIDER_RESPONSE_LENGTH) return false
        pending.push([(v as Record<string, unknown>)[key], depth + 1])
      }
    } else length += 1
    if (length > MAX_PROVIDER_RESPONSE_LENGTH) return false
  }
  return true
}

function scrubbedFailure(failure: FailureData, card: SentCard): FailureData {
  const details = mayFit(failure.provider_response)
    ? (scrubbed(failure.provider_response, card) as Record<string, unknown>)
    : {}
  return {
    code: scrubbedText(failure.code, card, 100),
    reason: scrubbedText(failure.reason, card),
    next_steps: scrubbedText(failure.next_steps, card),
    provider_response: JSON.stringify(details).length > MAX_PROVIDER_RESPONSE_LENGTH ? {} : details,
  }
}

/** An account number as the API shows it: its last four digits. */
const masked = (accountNumber: string) => `******${accountNumber.replace(/\D/g, '').slice(-4)}`

/** The answer if the contract allows it, with its members sent as null left out. */
function checked<T>(validator: { Check(value: unknown): boolean }, answer: unknown, call: string, card: SentCard): T {
  if (!validator.Check(answer))
    throw new ProcessorError('failed', `processor ${call}: not an answer the contract allows`)
  const present = Object.fromEntries(Object.entries(answer as object).filter(([, v]) => v !== null))
  // a reference is kept in clear and sent back with every later call: it must not be the card
  const reference = typeof present.reference === 'string' ? present.reference.replace(/\D/g, '') : ''
  if (card.number && reference.includes(card.number)) {
    throw new ProcessorError('failed', `processor ${call}: the reference holds the card number`)
  }
  return present as T
}

function checkedAuthorization<T extends AuthorizeOutcome | { outcome: 'otp_invalid' }>(answer: T, card: SentCard): T {
  if (answer.outcome === 'declined') return { ...answer, failure: scrubbedFailure(answer.failure, card) }
  if (answer.outcome === 'authorized' && answer.bankAccount) {
    // kept and compared as the API's timestamps are, whatever offset the processor wrote it in
    const expires = asTimestamp(answer.bankAccount.expires_at)
    if (expires === undefined) throw new ProcessorError('failed', 'processor: a bank link whose expires_at is no time')
    return {
      ...answer,
      bankAccount: {
        ...answer.bankAccount,
        account_number: masked(answer.bankAccount.account_number),
        expires_at: expires,
      },
    }
  }
  return answer
}

function checkedOperation(answer: unknown, call: string): OperationOutcome {
  const outcome = checked<OperationOutcome>(OperationAnswer, answer, call, {})
  return outcome.outcome === 'declined' ? { ...outcome, failure: scrubbedFailure(outcome.failure, {}) } : outcome
}

/** The processor with its every answer checked and its card data taken out (see above). */
export function checkedProcessor(inner: Processor): Processor {
  return {
    get decidesInProcess() {
      return inner.decidesInProcess
    },
    async authorize(req) {
      const card = { number: req.card?.number, cvc: req.card?.cvc }
      const answer = checked<AuthorizeOutcome>(AuthorizeAnswer, await inner.authorize(req), 'authorize', card)
      return checkedAuthorization(answer, card)
    },
    async completeStep(req, reference, step, payerAnswer) {
      const card = { number: req.card?.number, cvc: req.card?.cvc }
      const answer = await inner.completeStep(req, reference, step, payerAnswer)
      return checkedAuthorization(
        checked<AuthorizeOutcome | { outcome: 'otp_invalid' }>(StepAnswer, answer, 'complete-step', card),
        card,
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
