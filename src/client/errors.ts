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
