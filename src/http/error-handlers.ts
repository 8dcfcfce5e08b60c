import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { randomHex } from '../crypto/random.js'
import { AppError, withViolations } from '../errors.js'
import { isAccountGone, isDatabaseUnavailable, isTransactionConflict } from '../store/db.js'
import { trackAllowedMethods } from './allowed-methods.js'
import { setResponseHeaders } from './headers.js'
import { errorPage, HOSTED_PAGE_HEADERS, HTML, isHostedPath } from './hosted-page.js'
import { validationError } from './validation.js'

// Every refusal, wherever it is raised (the HTTP parser, the router, a route), is answered in the
// one envelope of src/errors.ts, with a Request-Id; nothing but an unexpected fault is a 500.

/** Errors Fastify raises itself, mapped onto the catalog. */
function frameworkError(err: FastifyError): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('body_too_large', 'The request body is larger than the service accepts')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_json', 'The Content-Length header does not match the body')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is empty')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_BAD_URL_ENCODING':
      return new AppError('url_invalid', 'The URL could not be decoded')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('resource_missing', 'No such object: the id in the path is too long')
    default: {
      if (err instanceof SyntaxError) return new AppError('invalid_json', 'The request body is not valid JSON')
      // any other refusal of the framework's, by its status
      const status = err.statusCode ?? 500
      if (status === 404) return new AppError('route_missing', 'No such route')
      if (status === 405) return new AppError('method_not_allowed', 'That method is not allowed here')
      if (status === 413) return new AppError('body_too_large', 'The request body is larger than the service accepts')
      if (status === 415)
        return new AppError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)')
      if (status >= 400 && status < 500) return new AppError('request_invalid', 'The request is malformed')
      return undefined
    }
  }
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses never reach Fastify's hooks,
 * so they are answered on the socket, headers and all.
 */
export const answerClientError: NonNullable<FastifyServerOptions['clientErrorHandler']> = (err, socket) => {
  const code = (err as { code?: string }).code
  const e =
    code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large', 'The request headers are too large')
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout', 'The request was not sent in time')
        : new AppError('request_invalid', 'The request is not valid HTTP')
  refuseConnection(socket, e)
}

/** Connections refused: they get one answer saying why, then close. */
const refused = new WeakSet<Duplex>()

/**
 * A request read after one its connection was refused for: it never runs, as the connection
 * closes once the requests before the refused one are answered, and its own answer with it.
 */
export function afterRefusal(request: FastifyRequest): AppError | undefined {
  if (!refused.has(request.raw.socket)) return undefined
  return new AppError('request_invalid', 'An earlier request on this connection was refused; send this one again')
}

/**
 * Answers `e` on the connection, then closes it, once the requests read whole before the refused
 * one are answered. Those requests are under way: their work is done whatever comes after them,
 * so their own answers go first, in order, as a pipelining client expects. The answer under way
 * is the one Node's server attached to the socket (`_httpMessage`, which its own handler of these
 * errors reads too); when it finishes, Node attaches the next. `own`: the refused request's own
 * answer, when Node made one, which nobody else will send. `url`: its target, when it was read.
 */
function refuseConnection(socket: Duplex, e: AppError, own?: ServerResponse, url?: string): void {
  if (!socket.writable || refused.has(socket)) return
  refused.add(socket)
  answerAfterCurrent(socket, e, own, url)
}

function answerAfterCurrent(socket: Duplex, e: AppError, own?: ServerResponse, url?: string): void {
  const current = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
  // a request still being received (its body broken, or not sent in time) is the one refused
  if (!current || current === own || current.writableFinished || !current.req.complete) {
    if (socket.writable) answerOnSocket(socket, e, url)
    return
  }
  const next = () => setImmediate(() => answerAfterCurrent(socket, e, own, url))
  current.once('finish', next)
  current.once('close', () => current.writableFinished || socket.destroy())
}

/**
 * An answer in the envelope, written on the socket, which then closes; under the hosted pages'
 * addresses (`url`, when the request's target could be read), a page.
 */
function answerOnSocket(socket: Duplex, e: AppError, url?: string): void {
  const hosted = url !== undefined && isHostedPath(url)
  const body = hosted ? errorPage(e) : JSON.stringify(e.toBody())
  const pageHeaders = hosted ? Object.entries(HOSTED_PAGE_HEADERS).map(([k, v]) => `${k}: ${v}\r\n`) : []
  socket.end(
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\n` +
      `Content-Type: ${hosted ? HTML : 'application/json; charset=utf-8'}\r\nRequest-Id: req_${randomHex(12)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n${pageHeaders.join('')}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

/** An error's answer: in the envelope, or under the hosted pages' addresses a page with their headers. */
function sendError(request: { url: string }, reply: FastifyReply, err: AppError): FastifyReply {
  if (err.headers) reply.headers(err.headers)
  reply.code(err.status)
  if (isHostedPath(request.url)) return reply.headers(HOSTED_PAGE_HEADERS).type(HTML).send(errorPage(err))
  return reply.type('application/json').send(err.toBody())
}

/**
 * Requests Node's HTTP server answers itself unless told otherwise, answered in the envelope too:
 * an `Expect` it cannot meet (417), and `CONNECT`, which asks for a tunnel this service is not (400).
 */
export function answerOutsideFastify(server: Server): void {
  // a request answered here may follow others on its connection, still under way (refuseConnection)
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    res.shouldKeepAlive = false
    const e = new AppError('expectation_failed', 'Only Expect: 100-continue is met')
    refuseConnection(req.socket, e, res, req.url)
  })
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    // Node leaves a socket it hands over with no error listener: a reset while the requests before
    // it are answered would otherwise end the process
    socket.on('error', () => socket.destroy())
    refuseConnection(socket, new AppError('request_invalid', 'CONNECT is not served: this service is no proxy'))
  })
}

/** A HTTP/1.1 request without a Host header, which Node would answer itself with an empty body. */
export function missingHost(request: FastifyRequest): AppError | undefined {
  if (request.raw.httpVersion !== '1.1' || request.headers.host !== undefined) return undefined
  return new AppError('request_invalid', 'An HTTP/1.1 request must carry a Host header', { param: 'Host' })
}

/** Fastify's `frameworkErrors`: errors raised before routing (an undecodable URL, an over-long id). */
export const answerFrameworkError: NonNullable<FastifyServerOptions['frameworkErrors']> = (err, request, reply) => {
  const mapped = frameworkError(err) ?? new AppError('request_invalid', 'The request is malformed')
  const raw = reply as unknown as FastifyReply
  // no hook runs for these: the headers every answer carries are set here
  setResponseHeaders(request as unknown as FastifyRequest, raw)
  sendError(request, raw.header('Request-Id', request.id), mapped)
}

/**
 * Any error a request met as the catalog's: a refusal as it is, the database's unavailability or a
 * conflict as a 503 to retry, anything else as a 500 naming the request. The service's own faults
 * are logged here, once, whichever handler answers.
 */
export function catalogErrorOf(err: FastifyError | AppError, request: FastifyRequest): AppError {
  if (err instanceof AppError) return err
  if (err.validation) return validationError(err.validationContext ?? 'body', err.validation as never)
  const mapped = frameworkError(err)
  if (mapped) return mapped
  if (isDatabaseUnavailable(err)) {
    request.log.error({ err }, 'database unavailable')
    return new AppError('service_unavailable', 'The database cannot serve for now; retry the request', {
      headers: { 'Retry-After': '1' },
    })
  }
  // a key another process's cache still held, of an account since removed: the key is no more
  if (isAccountGone(err)) return new AppError('api_key_invalid', 'Invalid API key provided')
  if (isTransactionConflict(err)) {
    request.log.warn({ err }, 'transaction conflict')
    return new AppError('service_unavailable', 'The request met another at the database and was stopped; retry it', {
      headers: { 'Retry-After': '1' },
    })
  }
  request.log.error({ err }, 'unhandled error')
  return new AppError('internal_error', `An internal error occurred; quote request id ${request.id}`)
}

/**
 * The error handler of every route, and the answer to a request no route matches. Register before
 * the routes.
 */
export function registerErrorHandlers(app: FastifyInstance): void {
  const allowedMethods = trackAllowedMethods(app)
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    let appErr = catalogErrorOf(err, request)
    // a body its schema refused is also checked against the rules the schema cannot state, so
    // that one answer names every problem; the key, checked before the body, tells the mode
    const bodyRules = request.routeOptions.config.bodyRules
    if (bodyRules && (err as FastifyError).validationContext === 'body') {
      appErr = withViolations(appErr, bodyRules(request.body, request.caller?.livemode))
    }
    // under the hosted pages' addresses only requests no route takes get here (a 429 among them)
    sendError(request, reply, appErr)
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/'
    const allowed = allowedMethods(path)
    // a route of this method that found nothing (a file the API reference does not have) is a 404
    const err =
      allowed.length > 0 && !allowed.includes(request.method)
        ? new AppError(
            'method_not_allowed',
            `${request.method} is not allowed on ${path}; it takes ${allowed.join(', ')}`,
            {
              headers: { Allow: allowed.join(', ') },
            },
          )
        : new AppError('route_missing', `No route ${request.method} ${path}`)
    sendError(request, reply, err)
  })
}
