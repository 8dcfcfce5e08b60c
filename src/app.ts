import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type preValidationHookHandler,
} from 'fastify'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import sjson from 'secure-json-parse'
import { DEFAULT_REQUEST_TIMEOUT_MS } from './config.js'
import { randomHex } from './crypto/random.js'
import type { Vault } from './crypto/vault.js'
import { AppError, withViolations } from './errors.js'
import { authHook } from './http/auth.js'
import { type AuthFailureSettings, authFailureCounter } from './http/auth-failures.js'
import { DOCS_CSP, DOCS_PREFIX, setResponseHeaders } from './http/headers.js'
import { registerIdempotency } from './http/idempotency.js'
import { rateLimitKey } from './http/rate-key.js'
import { accountRoutes } from './http/routes/accounts.js'
import { chargeRoutes } from './http/routes/charges.js'
import { customerRoutes } from './http/routes/customers.js'
import { dashboardRoutes } from './http/routes/dashboard.js'
import { deliveryRoutes } from './http/routes/deliveries.js'
import {
  DEFAULT_EVENT_STREAM_POLL_MS,
  type EventStreamSettings,
  eventStreamRoutes,
} from './http/routes/event-stream.js'
import { eventRoutes } from './http/routes/events.js'
import { hostedPageUrl, hostedRoutes } from './http/routes/hosted.js'
import { meRoutes } from './http/routes/me.js'
import { sourceRoutes } from './http/routes/sources.js'
import { testClockRoutes } from './http/routes/test-clock.js'
import { validationError, validatorCompiler } from './http/validation.js'
import { type DeliveryWorker, type DeliveryWorkerSettings, startDeliveryWorker } from './notify/worker.js'
import { buildServices, type ServiceOptions, type Services } from './services/index.js'
import type { Db } from './store/db.js'

export interface AppDeps {
  db: Db
  vault: Vault
  logger?: Logger | false
  bodyLimit?: number
  /**
   * How long a client may take to send a whole request (headers and body), in milliseconds; one
   * that takes longer is answered 408 and its connection closed. A half-sent request would
   * otherwise hold its connection, and a shutdown waiting for it, for ever.
   */
  requestTimeoutMs?: number
  options?: ServiceOptions
  /**
   * Runs a notify delivery worker with the app: started when the app is ready, stopped when it
   * closes. Absent, this app only queues notify calls (another process, or startDeliveryWorker,
   * sends them).
   */
  notify?: DeliveryWorkerSettings | undefined
  /**
   * Runs the recovery sweep with the app: operations under way longer than `graceMs` (their
   * process died) are finished, and with `payerTimeoutMs`, charges whose payer has not answered
   * for that long fail. Absent, nothing is swept in this app.
   */
  recovery?:
    | {
        intervalMs: number
        graceMs: number
        payerTimeoutMs?: number | undefined
        /** card data is erased this long after its source was made (docs/api.md, card data) */
        cardDataRetentionMs?: number | undefined
      }
    | undefined
  /** how long an Idempotency-Key stays held by a request before a retry may take it over */
  idempotencyLeaseSeconds?: number | undefined
  /** requests per key per window; absent, no limit. With a Redis client the count is shared. */
  rateLimit?: RateLimitSettings | undefined
  /**
   * unknown keys per client address per window before that address's uncached keys are refused
   * unlooked-up (http/auth-failures.ts); absent, none are counted
   */
  authFailures?: AuthFailureSettings | undefined
  /**
   * the proxies in front of the service (addresses, CIDR ranges or `loopback`, `linklocal`,
   * `uniquelocal`, comma-separated): a request from one of them is taken to come from the address
   * its X-Forwarded-For names, over the scheme and host of X-Forwarded-Proto and -Host
   */
  trustProxy?: string | undefined
  /** how open event streams look for new events; DEFAULT_EVENT_STREAM_POLL_MS when absent */
  eventStream?: EventStreamSettings | undefined
  /** the operator's token for POST and DELETE /v2/accounts; absent, those answer 404 */
  adminToken?: string | undefined
}

export interface RateLimitSettings {
  max: number
  windowMs: number
  redis?: Redis | undefined
  /** keeps the counters of several deployments (or tests) on one Redis apart */
  namespace?: string
}

export type App = FastifyInstance & { services: Services }

interface OpenApiOperation {
  parameters?: Record<string, unknown>[]
  requestBody?: { required?: boolean }
  responses?: Record<string, { headers?: Record<string, unknown> }>
}
type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation>> } & Record<string, unknown>

/**
 * What the route schemas cannot say: which bodies may be left out, the Idempotency-Key every POST
 * takes, and the Request-Id on every answer.
 */
function describeHeaders(doc: OpenApiDocument, optionalBodies: ReadonlySet<string>): OpenApiDocument {
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(operations)) {
      if (op.requestBody && optionalBodies.has(`${method} ${path}`)) op.requestBody.required = false
      // accounts are made by the operator's token, outside any account's idempotency keys
      if (method === 'post' && path.startsWith('/v2/') && !path.startsWith('/v2/hosted/') && path !== '/v2/accounts') {
        op.parameters = [
          ...(op.parameters ?? []),
          {
            in: 'header',
            name: 'Idempotency-Key',
            required: false,
            description:
              'Makes a retry safe: the first request with a key runs, a retry gets its answer again (docs/api.md). X-Idempotency-Key is the same header.',
            schema: { type: 'string', minLength: 1, maxLength: 255 },
          },
        ]
      }
      for (const response of Object.values(op.responses ?? {})) {
        response.headers = {
          ...response.headers,
          'Request-Id': { description: 'The id of this request, for support', schema: { type: 'string' } },
        }
      }
    }
  }
  return doc
}

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

export async function createApp(deps: AppDeps): Promise<App> {
  const requestTimeoutMs = deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const app = Fastify({
    loggerInstance: deps.logger || undefined,
    logger: deps.logger === undefined ? false : undefined,
    genReqId: () => `req_${randomHex(12)}`,
    requestIdHeader: false,
    bodyLimit: deps.bodyLimit ?? 65_536,
    trustProxy: deps.trustProxy ?? false,
    requestTimeout: requestTimeoutMs,
    // Node looks for requests past their time every this often (30 s unless told)
    http: {
      connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs),
      headersTimeout: Math.min(60_000, requestTimeoutMs),
    },
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 300 },
    // answered by the hook below instead, in the one envelope and with a Request-Id
    return503OnClosing: false,
    // requests Node's HTTP parser refuses never reach Fastify's hooks: answer them on the socket
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return
      const code = (err as { code?: string }).code
      const [e, reason] =
        code === 'HPE_HEADER_OVERFLOW'
          ? [new AppError('headers_too_large', 'The request headers are too large'), 'Request Header Fields Too Large']
          : code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? [new AppError('request_timeout', 'The request was not sent in time'), 'Request Timeout']
            : [new AppError('request_invalid', 'The request is not valid HTTP'), 'Bad Request']
      const body = JSON.stringify(e.toBody())
      socket.end(
        `HTTP/1.1 ${e.status} ${reason}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nRequest-Id: req_${randomHex(12)}\r\n` +
          'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    },
    // errors raised before routing (an undecodable URL, an over-long id) get the one envelope too
    frameworkErrors: (err, request, reply) => {
      const mapped = frameworkError(err) ?? new AppError('request_invalid', 'The request is malformed')
      const raw = reply as unknown as FastifyReply
      // no hook runs for these: the headers every answer carries are set here
      setResponseHeaders(request as unknown as FastifyRequest, raw)
      raw.header('Request-Id', request.id).code(mapped.status).type('application/json').send(mapped.toBody())
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App

  let worker: DeliveryWorker | undefined
  const options: ServiceOptions = { ...deps.options }
  let sweepAtOnce: (() => void) | undefined
  const outerClock = options.onTestClockAdvanced
  options.onTestClockAdvanced = () => {
    outerClock?.()
    sweepAtOnce?.()
  }
  if (deps.notify) {
    const outer = options.onNotifyQueued
    options.onNotifyQueued = () => {
      outer?.()
      worker?.wake()
    }
  }
  const services = buildServices({
    db: deps.db,
    vault: deps.vault,
    options,
    hostedPageUrl: hostedPageUrl(options.publicUrl ?? options.listenUrl ?? ''),
  })
  app.decorate('services', services)
  app.decorateRequest('caller', null as never)
  app.decorateRequest('presented', null)

  app.setValidatorCompiler(validatorCompiler)
  app.setSchemaErrorFormatter((errors, part) => validationError(part, errors as never))

  // An empty body is no body (clients send Content-Type on bodiless POSTs); JSON parsing refuses
  // prototype poisoning.
  app.removeContentTypeParser('application/json')
  // text bodies are not JSON and are refused as such (415), not read as strings
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }))
    } catch {
      done(new AppError('invalid_json', 'The request body is not valid JSON'), undefined)
    }
  })

  // A request that reaches a closing server (pipelined or sent on a kept-alive connection while
  // the requests before it finish) is refused, so the client retries it on a running process.
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  // an answer given while closing also ends its connection, which would otherwise stay open,
  // kept alive, until its idle timeout and hold the shutdown up that long
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close')
    setResponseHeaders(request, reply)
    done(null, payload)
  })
  // hooks on every request take a callback, not a promise: one less turn of the event loop each
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Request-Id', request.id)
    if (!closing) return done()
    done(
      new AppError('service_unavailable', 'The service is shutting down; retry the request', {
        headers: { 'Retry-After': '1' },
      }),
    )
  })

  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    let appErr: AppError
    if (err instanceof AppError) appErr = err
    else if ((err as FastifyError).validation) {
      appErr = validationError(
        (err as FastifyError).validationContext ?? 'body',
        (err as FastifyError).validation as never,
      )
    } else {
      const mapped = frameworkError(err as FastifyError)
      if (mapped) appErr = mapped
      else {
        request.log.error({ err }, 'unhandled error')
        appErr = new AppError('internal_error', `An internal error occurred; quote request id ${request.id}`)
      }
    }
    // a body its schema refused is also checked against the rules the schema cannot state, so
    // that one answer names every problem
    const bodyRules = request.routeOptions.config.bodyRules
    if (bodyRules && (err as FastifyError).validationContext === 'body') {
      appErr = withViolations(appErr, bodyRules(request.body))
    }
    if (appErr.headers) reply.headers(appErr.headers)
    reply.code(appErr.status).type('application/json').send(appErr.toBody())
  })

  app.setNotFoundHandler((request, reply) => {
    const err = new AppError('route_missing', `No route ${request.method} ${request.url.split('?')[0]}`)
    reply.code(err.status).send(err.toBody())
  })

  if (deps.rateLimit) {
    const limit = deps.rateLimit
    await app.register(rateLimit, {
      global: true,
      max: limit.max,
      timeWindow: limit.windowMs,
      redis: limit.redis,
      nameSpace: limit.namespace ?? 'jackdaw-rate:',
      // a Redis outage must not stop payments: requests pass uncounted until it is back
      skipOnError: true,
      keyGenerator: rateLimitKey,
      errorResponseBuilder: (_req, ctx) =>
        new AppError(
          'rate_limited',
          `Too many requests: at most ${ctx.max} per ${limit.windowMs} ms for one key or address; retry after ${ctx.after}`,
        ),
    })
  }

  // operations whose body may be left out, as the OpenAPI document's paths name them
  const optionalBodies = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (!(route.config as { bodyOptional?: boolean } | undefined)?.bodyOptional) return
    for (const method of [route.method].flat()) {
      optionalBodies.add(`${method.toLowerCase()} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
    }
    // such an operation may be called with no body at all
    const emptyBody: preValidationHookHandler = (request, _reply, done) => {
      if (request.body === undefined) request.body = {}
      done()
    }
    route.preValidation = [route.preValidation ?? []].flat().concat(emptyBody)
  })
  await app.register(swagger, {
    transformObject: (doc) =>
      'openapiObject' in doc
        ? describeHeaders(doc.openapiObject as OpenApiDocument, optionalBodies)
        : doc.swaggerObject,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Jackdaw payment API',
        version: '2',
        description:
          'Charges, customers and single-use payment sources, in live and test mode. See docs/api.md for the rules behind each operation.',
      },
      components: {
        securitySchemes: {
          basicAuth: { type: 'http', scheme: 'basic', description: 'The API key as user name, empty password' },
          bearerAuth: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ basicAuth: [] }, { bearerAuth: [] }],
    },
  })
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX, logLevel: 'warn', staticCSP: DOCS_CSP })
  app.get('/v2/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger())

  // Every API route sits behind the key check and the idempotency hooks; documents do not.
  await app.register(async (api) => {
    // an API route takes a secret key unless it says otherwise; the rate limit reads this too
    api.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: route.config?.auth ?? 'secret' }
    })
    // after the rate limit (its hooks are the routes' own onRequest hooks), so that requests
    // without a valid key are counted too, by address, before any key is looked up
    api.addHook(
      'preParsing',
      authHook(services.accounts, deps.authFailures ? authFailureCounter(deps.authFailures) : undefined),
    )
    registerIdempotency(api, { db: deps.db, vault: deps.vault, leaseSeconds: deps.idempotencyLeaseSeconds })
    await api.register(meRoutes, { services })
    await api.register(sourceRoutes, { services })
    await api.register(customerRoutes, { services })
    await api.register(chargeRoutes, {
      services,
      publicUrl: options.publicUrl,
      live: options.liveProcessor !== undefined,
    })
    await api.register(eventRoutes, { services })
    await api.register(eventStreamRoutes, {
      services,
      settings: deps.eventStream ?? { pollMs: DEFAULT_EVENT_STREAM_POLL_MS },
    })
    await api.register(deliveryRoutes, { services })
    await api.register(testClockRoutes, { services })
  })
  await app.register(hostedRoutes, { services, publicUrl: options.publicUrl })
  await app.register(dashboardRoutes)
  await app.register(accountRoutes, { services, adminToken: deps.adminToken })
  app.addHook('onClose', () => services.charges.waitForReversals())

  const recovery = deps.recovery
  if (recovery) {
    let timer: NodeJS.Timeout | undefined
    let running: Promise<unknown> = Promise.resolve()
    const failed = (err: unknown) => app.log.error({ err }, 'recovery sweep failed')
    const sweep = () => {
      // the erasure of old card data and of old idempotency records goes on whatever becomes of
      // the charges' part
      const retentionMs = recovery.cardDataRetentionMs
      running = Promise.all([
        services.charges
          .recoverInterrupted(recovery.graceMs)
          .then(() => recovery.payerTimeoutMs && services.charges.expireAbandoned(recovery.payerTimeoutMs))
          .catch(failed),
        retentionMs && services.sources.eraseOldCardData(retentionMs).catch(failed),
        services.idempotency.purgeExpired().catch(failed),
      ]).finally(() => {
        if (timer) timer.refresh()
      })
      return running
    }
    // an advanced test clock may have made charges overdue: they are swept now, after any sweep under way
    sweepAtOnce = () => {
      running = running.then(() => timer && sweep())
    }
    app.addHook('onReady', async () => {
      timer = setTimeout(sweep, recovery.intervalMs)
      sweep()
    })
    app.addHook('onClose', async () => {
      clearTimeout(timer)
      timer = undefined
      await running
    })
  }

  const notify = deps.notify
  if (notify) {
    app.addHook('onReady', async () => {
      worker ??= startDeliveryWorker({
        allow: options.notifyAllow,
        resolver: options.notifyResolver,
        ...notify,
        db: deps.db,
        vault: deps.vault,
        logger: deps.logger,
      })
    })
    app.addHook('onClose', async () => {
      await worker?.stop()
      worker = undefined
    })
  }

  return app
}
