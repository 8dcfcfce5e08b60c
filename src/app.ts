import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { DEFAULT_REQUEST_TIMEOUT_MS } from './config.js'
import { randomHex } from './crypto/random.js'
import type { Vault } from './crypto/vault.js'
import { AppError } from './errors.js'
import { ROUTER_OPTIONS } from './http/allowed-methods.js'
import { authHook } from './http/auth.js'
import { type AuthFailureSettings, authFailureCounter } from './http/auth-failures.js'
import {
  afterRefusal,
  answerClientError,
  answerFrameworkError,
  answerOutsideFastify,
  missingHost,
  registerErrorHandlers,
} from './http/error-handlers.js'
import { setResponseHeaders } from './http/headers.js'
import { registerIdempotency } from './http/idempotency.js'
import { parseJsonBody } from './http/json-body.js'
import { registerApiDocs } from './http/openapi.js'
import { type RateLimitSettings, registerRateLimit } from './http/rate-limit.js'
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
import { testFaultRoutes } from './http/routes/test-faults.js'
import { testScenarioRoutes } from './http/routes/test-scenarios.js'
import { serializerCompiler } from './http/serialization.js'
import { registerFaultDecision, registerFaultEffects } from './http/test-fault-header.js'
import { validationError, validatorCompiler } from './http/validation.js'
import { type DeliveryWorker, type DeliveryWorkerSettings, startDeliveryWorker } from './notify/worker.js'
import { buildServices, type ServiceOptions, type Services } from './services/index.js'
import { type RecoverySweepSettings, recoverySweep } from './services/recovery-sweep.js'
import type { Db } from './store/db.js'

export type { RateLimitSettings } from './http/rate-limit.js'

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
  recovery?: RecoverySweepSettings | undefined
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

export type App = FastifyInstance & { services: Services }

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
      // checked in the hook below, which answers in the envelope
      requireHostHeader: false,
    },
    routerOptions: ROUTER_OPTIONS,
    // answered by the hook below instead, in the one envelope and with a Request-Id
    return503OnClosing: false,
    // refusals raised before any hook runs, answered in the one envelope all the same
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App

  let worker: DeliveryWorker | undefined
  const options: ServiceOptions = { payerTimeoutMs: deps.recovery?.payerTimeoutMs, ...deps.options }
  let sweepAtOnce: (() => void) | undefined
  const outerClock = options.onTestClockAdvanced
  // an advance may have made charges overdue and notify calls due: they are seen to now
  options.onTestClockAdvanced = () => {
    outerClock?.()
    sweepAtOnce?.()
    worker?.wake()
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
  // unknown API keys and wrong admin tokens, counted together by client address
  const authFailures = deps.authFailures ? authFailureCounter(deps.authFailures) : undefined
  app.decorateRequest('caller', null as never)
  app.decorateRequest('presented', null)

  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.setSchemaErrorFormatter((errors, part) => validationError(part, errors as never))

  app.removeContentTypeParser('application/json')
  // text bodies are not JSON and are refused as such (415), not read as strings
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer))
    } catch (err) {
      done(err as Error, undefined)
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
    if (!closing) return done(missingHost(request) ?? afterRefusal(request))
    done(
      new AppError('service_unavailable', 'The service is shutting down; retry the request', {
        headers: { 'Retry-After': '1' },
      }),
    )
  })

  registerErrorHandlers(app)
  answerOutsideFastify(app.server)

  // before the routes, whose own onRequest hooks its hooks become
  if (deps.rateLimit) await registerRateLimit(app, deps.rateLimit)

  // before the routes, whose schemas the document is built from
  await registerApiDocs(app)

  // Every API route sits behind the key check and the idempotency hooks; documents do not.
  await app.register(async (api) => {
    // an API route takes a secret key unless it says otherwise; the rate limit reads this too
    api.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: route.config?.auth ?? 'secret' }
    })
    // after the rate limit (its hooks are the routes' own onRequest hooks), so that requests
    // without a valid key are counted too, by address, before any key is looked up
    api.addHook('preParsing', authHook(services.accounts, authFailures))
    // a test-mode fault is decided before the Idempotency-Key is claimed and acts after
    registerFaultDecision(api, services.testFaults)
    registerIdempotency(api, { db: deps.db, vault: deps.vault, leaseSeconds: deps.idempotencyLeaseSeconds })
    registerFaultEffects(api)
    await api.register(meRoutes, { services })
    await api.register(sourceRoutes, { services, notifyAllow: options.notifyAllow })
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
    await api.register(testFaultRoutes, { services })
    await api.register(testScenarioRoutes, { services, publicUrl: options.publicUrl, notifyAllow: options.notifyAllow })
  })
  await app.register(hostedRoutes, { services, publicUrl: options.publicUrl })
  await app.register(dashboardRoutes)
  await app.register(accountRoutes, { services, adminToken: deps.adminToken, guard: authFailures })
  app.addHook('onClose', () => services.charges.waitForReversals())

  if (deps.recovery) {
    const sweep = recoverySweep(services, deps.recovery, (err) => app.log.error({ err }, 'recovery sweep failed'))
    sweepAtOnce = () => sweep.now()
    app.addHook('onReady', async () => sweep.start())
    app.addHook('onClose', () => sweep.stop())
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
