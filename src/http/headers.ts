import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'

/** Where the API reference lives: the one part of the service a browser renders with scripts. */
export const DOCS_PREFIX = '/v2/docs'
const OPENAPI_PATH = '/v2/openapi.json'

/**
 * The API reference page's content security policy: its scripts, styles and images come from the
 * service itself (Swagger UI sets some styles inline), it talks only to the service (to read the
 * OpenAPI document and to try requests), and no other site may frame it.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * Answers are never kept by a browser or a shared cache: they hold account data, and `GET /v2/me`
 * the webhook secrets. The API reference and its OpenAPI document are the same for everybody.
 */
export function setResponseHeaders(request: FastifyRequest, reply: FastifyReply): void {
  // a browser takes every answer for the type it says it is
  reply.header('X-Content-Type-Options', 'nosniff')
  const path = request.url.split('?', 1)[0] as string
  if (path !== OPENAPI_PATH && path !== DOCS_PREFIX && !path.startsWith(`${DOCS_PREFIX}/`)) {
    reply.header('Cache-Control', 'no-store')
  }
}

/**
 * The value of a header a request may send once: sent again, it must say the same (by `same`), or
 * the request is refused. Node keeps the first Authorization and joins repeated Idempotency-Keys
 * with a comma: a proxy or a log that reads another of them would disagree with the service on
 * which key a request used, and a key sent twice would be another key than the one sent once.
 */
export function headerSentOnce(
  request: FastifyRequest,
  name: string,
  shown: string,
  same: (value: string) => unknown = (value) => value,
): string | undefined {
  const raw = request.raw.rawHeaders
  let first: string | undefined
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== name) continue
    const value = raw[i + 1] as string
    if (first === undefined) first = value
    else if (same(value) !== same(first)) {
      throw new AppError('header_invalid', `${shown} is sent more than once, with different values; send it once`, {
        param: shown,
      })
    }
  }
  return first
}
