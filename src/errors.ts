import { GROUP_SEPARATORS, redactCardNumbers } from './domain/card.js'
import { ID_PREFIX } from './domain/ids.js'

/**
 * The closed set of error codes the API answers with. Each code has one HTTP status and one type;
 * every error leaves the server in one envelope: {error: {type, code, message, param?, detail?}}.
 */
export const ERROR_CATALOG = {
  // 400: the request is well formed but cannot be done in the object's state
  invalid_json: { status: 400, type: 'invalid_request_error' },
  request_invalid: { status: 400, type: 'invalid_request_error' },
  url_invalid: { status: 400, type: 'invalid_request_error' },
  header_invalid: { status: 400, type: 'invalid_request_error' },
  cursor_invalid: { status: 400, type: 'invalid_request_error' },
  source_used: { status: 400, type: 'invalid_request_error' },
  source_not_attached: { status: 400, type: 'invalid_request_error' },
  card_unavailable: { status: 400, type: 'invalid_request_error' },
  customer_source_mismatch: { status: 400, type: 'invalid_request_error' },
  charge_not_capturable: { status: 400, type: 'invalid_request_error' },
  charge_not_voidable: { status: 400, type: 'invalid_request_error' },
  charge_not_refundable: { status: 400, type: 'invalid_request_error' },
  charge_not_verifiable: { status: 400, type: 'invalid_request_error' },
  charge_not_pending: { status: 400, type: 'invalid_request_error' },
  amount_too_large: { status: 400, type: 'invalid_request_error' },
  otp_invalid: { status: 400, type: 'invalid_request_error' },
  confirmation_id_invalid: { status: 400, type: 'invalid_request_error' },
  delivery_not_failed: { status: 400, type: 'invalid_request_error' },
  livemode_unavailable: { status: 400, type: 'invalid_request_error' },
  test_mode_only: { status: 400, type: 'invalid_request_error' },
  // the processor refused a capture or void of an authorized charge; nothing changed
  processor_declined: { status: 400, type: 'card_error' },
  // 401, 403
  authentication_required: { status: 401, type: 'authentication_error' },
  api_key_invalid: { status: 401, type: 'authentication_error' },
  admin_token_invalid: { status: 401, type: 'authentication_error' },
  secret_key_required: { status: 403, type: 'permission_error' },
  // 404
  resource_missing: { status: 404, type: 'not_found_error' },
  route_missing: { status: 404, type: 'not_found_error' },
  // 405, 408, 409, 413, 415, 417, 422
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  idempotency_key_reused: { status: 409, type: 'idempotency_error' },
  idempotency_key_in_use: { status: 409, type: 'idempotency_error' },
  body_too_large: { status: 413, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  expectation_failed: { status: 417, type: 'invalid_request_error' },
  parameter_invalid: { status: 422, type: 'invalid_request_error' },
  parameter_missing: { status: 422, type: 'invalid_request_error' },
  parameter_unknown: { status: 422, type: 'invalid_request_error' },
  card_number_invalid: { status: 422, type: 'card_error' },
  card_expired: { status: 422, type: 'card_error' },
  // 429, 5xx
  rate_limited: { status: 429, type: 'rate_limit_error' },
  internal_error: { status: 500, type: 'api_error' },
  processor_error: { status: 502, type: 'api_error' },
  service_unavailable: { status: 503, type: 'api_error' },
} as const

export type ErrorCode = keyof typeof ERROR_CATALOG
export type ErrorType = (typeof ERROR_CATALOG)[ErrorCode]['type']

export interface ValidationDetail {
  loc: (string | number)[]
  msg: string
  type: string
}

/**
 * A run of 12 to 19 digits, alone or split by single separators (a space, a tab, a dash, a plus,
 * or any character as a URL encodes it): what a card number looks like. A value echoed into a
 * message (an id that names nothing, a path) may be a card number sent in the wrong field, as
 * it is or next to other text (`x4111…`, `ch_4111…`, `4111…@example.com`).
 */
const DIGIT_RUN = /(?:\d(?:[ \t+-]|%[0-9A-Fa-f]{2})?){11,18}\d/g
/**
 * Groups of three digits or more split by up to three separators at a time (white space, a dash of
 * any kind, the punctuation a person puts between groups, URL escapes): a card number as people
 * write it (`4111 - 1111 - 1111 - 1111`, `4111.1111.1111.1111`) when the groups hold 12 digits or
 * more. Groups of one or two digits (`metadata.0.0.0`, a date) are no card's.
 */
const DIGIT_GROUPS = new RegExp(`\\d{3,}(?:(?:[${GROUP_SEPARATORS}]|%[0-9A-Fa-f]{2}){1,3}\\d{3,})+`, 'g')
/** A word of lowercase hex, with or without an id's prefix: perhaps one of the service's own. */
const HEX_WORD = /(?<![0-9A-Za-z])(?:[a-z]+_)?[0-9a-f]{24,}(?![0-9A-Za-z])/
/**
 * The service's ids and tokens: an object's prefix with 32 hex digits (`ch_…`), a request's or a
 * reference's with 24 (`req_…`), or 48 hex digits (a payer's page token). Their random part may
 * hold a run of digits by chance: in a word of their shape only a run that is surely a card number
 * goes (redactCardNumbers), and any other word of hex digits is looked into.
 */
const ID_PREFIXES = Object.values(ID_PREFIX).join('|')
const OWN_TOKEN = new RegExp(`^(?:(?:${ID_PREFIXES})[0-9a-f]{32}|(?:req|bnk|conf|sim)_[0-9a-f]{24}|[0-9a-f]{48})$`)
const CARD_NUMBER_LIKE = new RegExp(`(${HEX_WORD.source})|(${DIGIT_GROUPS.source})|${DIGIT_RUN.source}`, 'g')
const digitsIn = (text: string) => text.replace(/\D/g, '').length

/**
 * The text with anything that looks like a card number taken out. Unlike a processor's answer
 * (domain/card.ts, redactCardNumbers), which is kept and shown and so is cut only where it surely
 * holds a card, a message echoes the caller's own input back: any long run of digits may go.
 */
export function withoutCardNumbers(text: string): string {
  return text.replace(CARD_NUMBER_LIKE, (run, hex?: string, groups?: string) => {
    if (hex !== undefined) return OWN_TOKEN.test(run) ? redactCardNumbers(run) : run.replace(DIGIT_RUN, '[redacted]')
    if (groups !== undefined && digitsIn(groups) < 12) return run.replace(DIGIT_RUN, '[redacted]')
    return '[redacted]'
  })
}

/**
 * An error's answer stays small whatever the request: a body of thousands of unknown fields, or
 * one very long field name, would otherwise come back many times its size. `detail` lists the
 * first entries and the message counts every one.
 */
export const MAX_DETAIL_ENTRIES = 50
export const MAX_MESSAGE_LENGTH = 1000
const MAX_DETAIL_MSG_LENGTH = 300
/** a field name in `param` or `loc`: the longest the interface has is far shorter */
const MAX_NAME_LENGTH = 200

const capped = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

export class AppError extends Error {
  readonly code: ErrorCode
  readonly param: string | undefined
  readonly detail: ValidationDetail[] | undefined
  readonly headers: Record<string, string> | undefined

  constructor(
    code: ErrorCode,
    message: string,
    extra: { param?: string; detail?: ValidationDetail[]; headers?: Record<string, string> } = {},
  ) {
    // messages are answered, logged and kept with idempotency keys: no card number goes with them
    super(capped(withoutCardNumbers(message), MAX_MESSAGE_LENGTH))
    this.name = 'AppError'
    this.code = code
    // a field's name is the caller's text too, echoed in param, loc and msg
    const name = (text: string) => capped(withoutCardNumbers(text), MAX_NAME_LENGTH)
    this.param = extra.param === undefined ? undefined : name(extra.param)
    this.detail = extra.detail?.slice(0, MAX_DETAIL_ENTRIES).map((d) => ({
      loc: d.loc.map((part) => (typeof part === 'string' ? name(part) : part)),
      msg: capped(withoutCardNumbers(d.msg), MAX_DETAIL_MSG_LENGTH),
      type: d.type,
    }))
    this.headers = extra.headers
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status
  }

  get type(): ErrorType {
    return ERROR_CATALOG[this.code].type
  }

  toBody() {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(this.param !== undefined ? { param: this.param } : {}),
        ...(this.detail !== undefined ? { detail: this.detail } : {}),
      },
    }
  }
}

/** One broken rule that a schema cannot express (Luhn, expiry, cross-field rules). */
export interface Violation {
  code: ErrorCode
  param: string
  msg: string
  type?: string
}

/** A 422 for every violation, one `detail` entry each; the first names the code and param. */
export function invalidParams([first, ...rest]: [Violation, ...Violation[]]): AppError {
  const detail = [first, ...rest].map(detailOf)
  return new AppError(first.code, problemsMessage(detail), { param: first.param, detail })
}

const detailOf = (v: Violation): ValidationDetail => ({
  loc: ['body', ...v.param.split('.')],
  msg: v.msg,
  type: v.type ?? 'value_error',
})

/**
 * The message of a 422: its one problem, or how many there are and each (past MAX_DETAIL_ENTRIES,
 * the first ones, as `detail` lists them).
 */
export function problemsMessage(detail: ValidationDetail[]): string {
  if (detail.length === 1) return (detail[0] as ValidationDetail).msg
  const listed = detail.slice(0, MAX_DETAIL_ENTRIES)
  const more = detail.length > listed.length ? ` (detail lists the first ${listed.length})` : ''
  return `${detail.length} problems${more}: ${listed.map((d) => d.msg).join('; ')}`
}

/**
 * A body's 422 with more violations added, those of fields it does not name already: the rules a
 * schema cannot state, found in a body its schema refused. Its first problem stays the first.
 */
export function withViolations(err: AppError, more: Violation[]): AppError {
  const named = new Set(err.detail?.map((d) => d.loc.slice(1).join('.')))
  const added = more.filter((v) => !named.has(v.param)).map(detailOf)
  if (added.length === 0) return err
  const detail = [...(err.detail ?? []), ...added]
  return new AppError(err.code, problemsMessage(detail), { param: err.param, detail })
}

/** A 404; `param` names where the id came from: the path (`id`) or a body field. */
export function notFound(what: string, id: string, param = 'id'): AppError {
  return new AppError('resource_missing', `No such ${what}: '${id}'`, { param })
}
