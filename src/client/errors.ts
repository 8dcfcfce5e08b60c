import type { Static } from 'typebox'
import type { ErrorEnvelope } from '../schemas/common.js'

/** The one error envelope the service answers every error with. */
export type ErrorBody = Static<typeof ErrorEnvelope>
export type ErrorDetail = NonNullable<ErrorBody['error']['detail']>[number]

/** An error answer of the service: its status, `Request-Id` and envelope. */
export class JackdawError extends Error {
  override readonly name = 'JackdawError'
  readonly type: string
  readonly code: string
  readonly param: string | undefined
  readonly detail: ErrorDetail[] | undefined

  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly requestId: string | undefined,
  ) {
    super(body.error.message)
    this.type = body.error.type
    this.code = body.error.code
    this.param = body.error.param
    this.detail = body.error.detail
  }
}

/** No answer came: the connection failed or timed out, after every retry. */
export class JackdawConnectionError extends Error {
  override readonly name = 'JackdawConnectionError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** A body's JSON, or undefined for an empty or unreadable one. */
export const parsedJson = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

/**
 * The error an answer that is not a success stands for: the service's own envelope, or, for any
 * other body (a proxy's page, say), an `unexpected_response` (unexpectedAnswer).
 */
export function errorOf(res: Response, text: string): JackdawError {
  const parsed = parsedJson(text)
  if (parsed && typeof parsed === 'object' && 'error' in parsed) {
    return new JackdawError(res.status, parsed as ErrorBody, res.headers.get('request-id') ?? undefined)
  }
  return unexpectedAnswer(res, text)
}

/**
 * An answer that is not the service's, an error or a success alike (another server's page, say):
 * an `unexpected_response` that quotes its start, on one line so that a message about it is one.
 */
export function unexpectedAnswer(res: Response, text: string): JackdawError {
  const quoted = text.slice(0, 200).replace(/\s+/g, ' ').trim()
  const envelope = {
    error: { type: 'api_error', code: 'unexpected_response', message: `HTTP ${res.status}: ${quoted}` },
  }
  return new JackdawError(res.status, envelope, res.headers.get('request-id') ?? undefined)
}
