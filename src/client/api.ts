import type { Static } from 'typebox'
import type * as account from '../schemas/account.js'
import type * as charge from '../schemas/charge.js'
import type * as common from '../schemas/common.js'
import type * as customer from '../schemas/customer.js'
import type * as delivery from '../schemas/delivery.js'
import type * as event from '../schemas/event.js'
import type * as scenario from '../schemas/scenario.js'
import type * as source from '../schemas/source.js'
import type * as testClock from '../schemas/test-clock.js'
import type * as testFaults from '../schemas/test-faults.js'
import type { FaultName } from '../schemas/test-faults.js'
import {
  type ErrorBody,
  errorOf,
  JackdawConnectionError,
  JackdawError,
  parsedJson,
  unexpectedAnswer,
} from './errors.js'
import { resumingStream, type StreamOptions, sleep } from './sse.js'

export type { ErrorBody, StreamOptions }
export { JackdawConnectionError, JackdawError }

// The objects and request bodies, as the service's own schemas (and so its OpenAPI document) say.
export type Charge = Static<typeof charge.Charge>
export type Refund = Charge['refunds'][number]
export type Source = Static<typeof source.Source>
export type Customer = Static<typeof customer.Customer>
export type DeletedCustomer = Static<typeof customer.DeletedCustomer>
export type Event = Static<typeof event.Event>
export type Delivery = Static<typeof delivery.Delivery>
export type Account = Static<typeof account.Account>
export type WebhookSecret = Static<typeof account.WebhookSecret>
export type NewAccountParams = Static<typeof account.NewAccount>
export type NewAccountKeys = Static<typeof account.NewAccountKeys>
export type DeletedAccount = Static<typeof account.DeletedAccount>
export type TestClock = Static<typeof testClock.TestClock>
export type AdvanceTestClockParams = Static<typeof testClock.AdvanceBody>
export type TestFaults = Static<typeof testFaults.TestFaults>
export type TestFaultRule = Static<typeof testFaults.FaultRule>
export type Scenario = Static<typeof scenario.Scenario>
export type ScenarioRun = Static<typeof scenario.ScenarioRun>
export type ScenarioOverrides = Static<typeof scenario.ScenarioOverrides>
export type ErrorEnvelope = Static<typeof common.ErrorEnvelope>
export type CreateChargeParams = Static<typeof charge.CreateChargeBody>
export type CaptureParams = Static<typeof charge.CaptureBody>
export type RefundParams = Static<typeof charge.RefundBody>
export type VerifyParams = Static<typeof charge.VerifyBody>
export type TestAuthorizeParams = Static<typeof charge.TestAuthorizeBody>
export type CreateSourceParams = Static<typeof source.CreateSourceBody>
export type CreateCustomerParams = Static<typeof customer.CreateCustomerBody>
export type UpdateCustomerParams = Static<typeof customer.UpdateCustomerBody>
export type AttachSourceParams = Static<typeof customer.AttachSourceBody>
export type ListParams = Static<typeof common.ListQuery>
export type ChargeListParams = Static<typeof charge.ChargeListQuery>
export type OfChargeListParams = Static<typeof charge.OfChargeQuery>

export interface List<T> {
  object: 'list'
  next: string | null
  data: T[]
}

export interface ClientOptions {
  /** a secret key (sk_…), or a public key for the operations that take one */
  apiKey: string
  /** where the service is, e.g. http://127.0.0.1:8080 */
  baseUrl: string
  /** retries of a request answered 429 or 503, or that got no answer (default 2) */
  maxRetries?: number
  /** how long one attempt may take, in milliseconds (default 30 000) */
  timeoutMs?: number
  /** the longest wait between attempts, whatever Retry-After asks (default 20 000 ms) */
  maxRetryDelayMs?: number
  fetch?: typeof fetch
}

export interface RequestOptions {
  /** for a POST: the key that makes a retry safe; one is made when left out */
  idempotencyKey?: string
  signal?: AbortSignal
  /**
   * test mode: a fault for the service to act out (the Jackdaw-Test-Fault header, e.g.
   * `lost_response`), sent with the first attempt only, so that the client's own retries show how
   * the service recovers from it
   */
  testFault?: TestFaultHeader
}

/** A Jackdaw-Test-Fault header's value: a fault's name, or processor_latency with its milliseconds. */
export type TestFaultHeader = Exclude<FaultName, 'processor_latency'> | `processor_latency=${number}`

type Query = Record<string, string | number | boolean | undefined>

/** Answers that say to try again: too many requests, or the service unable to serve for now. */
const RETRIED = new Set([429, 503])

const enc = encodeURIComponent

/** 32 random hex digits; crypto.getRandomValues is there in every browser context, secure or not. */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

function queryString(query: Query | undefined): string {
  const pairs = Object.entries(query ?? {}).filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
  return pairs.length ? `?${pairs.map(([k, v]) => `${enc(k)}=${enc(String(v))}`).join('&')}` : ''
}

/**
 * A client of the Jackdaw API: a method per operation, typed by the service's schemas. Every POST
 * carries an Idempotency-Key (made here unless given), so that the retries of a request answered
 * 429 or 503, or that got no answer, are safe; they wait as Retry-After says, else back off
 * exponentially with jitter. A DELETE, and the operator's account creation, are sent again after
 * a 429 only (send).
 */
export function createClient(options: ClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '')
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  const maxRetries = options.maxRetries ?? 2
  const timeoutMs = options.timeoutMs ?? 30_000
  const maxDelay = options.maxRetryDelayMs ?? 20_000
  const authorization = `Bearer ${options.apiKey}`

  function delayFor(attempt: number, retryAfter: string | null): number {
    const seconds = retryAfter !== null && /^\d+(\.\d+)?$/.test(retryAfter.trim()) ? Number(retryAfter) : undefined
    const backoff = 500 * 2 ** attempt * (0.75 + Math.random() * 0.5)
    return Math.min(maxDelay, seconds !== undefined ? seconds * 1000 : backoff)
  }

  /**
   * `repeatable`: sending the request again after it may have been carried out is safe (a read, a
   * PUT, a POST whose Idempotency-Key the service keeps). Any other (a DELETE, an operator's POST)
   * is sent again only after a 429, which the service answers before doing anything: after no
   * answer or a 503 it may have been done, and a second one would answer that it is gone. The
   * body is read within the attempt: one cut or stalled past timeoutMs is no answer either.
   */
  async function send(
    method: string,
    path: string,
    body: unknown,
    opts: RequestOptions = {},
    repeatable = method !== 'DELETE',
  ): Promise<{ res: Response; text: string }> {
    const headers: Record<string, string> = { authorization, accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (method === 'POST') headers['idempotency-key'] = opts.idempotencyKey ?? newIdempotencyKey()
    const payload = body === undefined ? undefined : JSON.stringify(body)
    for (let attempt = 0; ; attempt++) {
      const signals = [AbortSignal.timeout(timeoutMs), ...(opts.signal ? [opts.signal] : [])]
      let res: Response
      let text: string
      try {
        const sent = attempt === 0 && opts.testFault ? { ...headers, 'jackdaw-test-fault': opts.testFault } : headers
        res = await doFetch(`${base}${path}`, {
          method,
          headers: sent,
          body: payload,
          signal: AbortSignal.any(signals),
        })
        text = await res.text()
      } catch (err) {
        if (opts.signal?.aborted) throw err
        if (attempt >= maxRetries || !repeatable) {
          throw new JackdawConnectionError(`${method} ${base}${path}: no answer (${(err as Error).message})`, {
            cause: err,
          })
        }
        await sleep(delayFor(attempt, null), opts.signal)
        continue
      }
      if (RETRIED.has(res.status) && (repeatable || res.status === 429) && attempt < maxRetries) {
        await sleep(delayFor(attempt, res.headers.get('retry-after')), opts.signal)
        continue
      }
      return { res, text }
    }
  }

  async function request<T>(
    method: string,
    path: string,
    body?: unknown,
    opts?: RequestOptions,
    repeatable?: boolean,
  ): Promise<T> {
    const { res, text } = await send(method, path, body, opts, repeatable)
    if (!res.ok) throw errorOf(res, text)
    // every success of the service is a JSON object: anything else comes from another server
    const parsed = parsedJson(text)
    if (typeof parsed !== 'object' || parsed === null) throw unexpectedAnswer(res, text)
    return parsed as T
  }

  const get = <T>(path: string, query?: Query, opts?: RequestOptions) =>
    request<T>('GET', `${path}${queryString(query)}`, undefined, opts)
  const post = <T>(path: string, body?: unknown, opts?: RequestOptions) => request<T>('POST', path, body ?? {}, opts)

  /**
   * The account's events as they are recorded (GET /v2/events/stream). A dropped connection is
   * opened again after the last event received, so none is missed; an event that comes again
   * after a reconnect is skipped.
   */
  const stream = (opts: StreamOptions = {}) =>
    resumingStream<Event>(
      (last) =>
        doFetch(`${base}/v2/events/stream`, {
          headers: { authorization, accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) },
          signal: opts.signal ?? null,
        }),
      (status) => RETRIED.has(status),
      opts,
    )

  return {
    me: {
      retrieve: (opts?: RequestOptions) => get<Account>('/v2/me', undefined, opts),
      rollWebhookSecret: (opts?: RequestOptions) => post<WebhookSecret>('/v2/me/webhook_secret/roll', {}, opts),
    },
    sources: {
      create: (params: CreateSourceParams, opts?: RequestOptions) => post<Source>('/v2/sources/', params, opts),
      retrieve: (id: string, opts?: RequestOptions) => get<Source>(`/v2/sources/${enc(id)}`, undefined, opts),
    },
    charges: {
      create: (params: CreateChargeParams, opts?: RequestOptions) => post<Charge>('/v2/charges/', params, opts),
      list: (params?: ChargeListParams, opts?: RequestOptions) => get<List<Charge>>('/v2/charges/', params, opts),
      retrieve: (id: string, opts?: RequestOptions) => get<Charge>(`/v2/charges/${enc(id)}`, undefined, opts),
      capture: (id: string, params: CaptureParams = {}, opts?: RequestOptions) =>
        post<Charge>(`/v2/charges/${enc(id)}/capture`, params, opts),
      void: (id: string, opts?: RequestOptions) => post<Charge>(`/v2/charges/${enc(id)}/void`, {}, opts),
      refund: (id: string, params: RefundParams = {}, opts?: RequestOptions) =>
        post<Charge>(`/v2/charges/${enc(id)}/refund`, params, opts),
      verify: (id: string, params: VerifyParams, opts?: RequestOptions) =>
        post<Charge>(`/v2/charges/${enc(id)}/verify`, params, opts),
      /** test mode: answers a pending charge as its payer would on the hosted page */
      testAuthorize: (id: string, params: TestAuthorizeParams, opts?: RequestOptions) =>
        post<Charge>(`/v2/test/charges/${enc(id)}/authorize`, params, opts),
    },
    customers: {
      create: (params: CreateCustomerParams, opts?: RequestOptions) => post<Customer>('/v2/customers/', params, opts),
      list: (params?: ListParams, opts?: RequestOptions) => get<List<Customer>>('/v2/customers/', params, opts),
      retrieve: (id: string, opts?: RequestOptions) => get<Customer>(`/v2/customers/${enc(id)}`, undefined, opts),
      byEmail: (email: string, opts?: RequestOptions) =>
        get<Customer>(`/v2/customers/by_email/${enc(email)}`, undefined, opts),
      update: (id: string, params: UpdateCustomerParams, opts?: RequestOptions) =>
        request<Customer>('PUT', `/v2/customers/${enc(id)}`, params, opts),
      delete: (id: string, opts?: RequestOptions) =>
        request<DeletedCustomer>('DELETE', `/v2/customers/${enc(id)}`, undefined, opts),
      attachSource: (id: string, params: AttachSourceParams, opts?: RequestOptions) =>
        post<Customer>(`/v2/customers/${enc(id)}/sources`, params, opts),
      detachSource: (id: string, sourceId: string, opts?: RequestOptions) =>
        request<Customer>('DELETE', `/v2/customers/${enc(id)}/sources/${enc(sourceId)}`, undefined, opts),
    },
    events: {
      list: (params?: OfChargeListParams, opts?: RequestOptions) => get<List<Event>>('/v2/events/', params, opts),
      retrieve: (id: string, opts?: RequestOptions) => get<Event>(`/v2/events/${enc(id)}`, undefined, opts),
      stream,
    },
    deliveries: {
      list: (params?: OfChargeListParams, opts?: RequestOptions) =>
        get<List<Delivery>>('/v2/deliveries/', params, opts),
      retrieve: (id: string, opts?: RequestOptions) => get<Delivery>(`/v2/deliveries/${enc(id)}`, undefined, opts),
      redeliver: (id: string, opts?: RequestOptions) => post<Delivery>(`/v2/deliveries/${enc(id)}/redeliver`, {}, opts),
    },
    /** The account's test clock (a test key). */
    testClock: {
      retrieve: (opts?: RequestOptions) => get<TestClock>('/v2/test/clock', undefined, opts),
      advance: (params: AdvanceTestClockParams, opts?: RequestOptions) =>
        post<TestClock>('/v2/test/clock/advance', params, opts),
    },
    /** The account's fault rules (a test key); one request takes a fault by the Jackdaw-Test-Fault header. */
    testFaults: {
      retrieve: (opts?: RequestOptions) => get<TestFaults>('/v2/test/faults', undefined, opts),
      /** replaces every rule of the account; [] removes them all */
      update: (rules: TestFaultRule[], opts?: RequestOptions) =>
        request<TestFaults>('PUT', '/v2/test/faults', { rules }, opts),
    },
    /** Test-mode scenarios: named flows the service runs as a client would (a test key). */
    scenarios: {
      list: (opts?: RequestOptions) => get<List<Scenario>>('/v2/test/scenarios', undefined, opts),
      run: (name: string, overrides: ScenarioOverrides = {}, opts?: RequestOptions) =>
        post<ScenarioRun>(`/v2/test/scenarios/${enc(name)}`, overrides, opts),
    },
    /** Accounts, with the operator's token (JACKDAW_ADMIN_TOKEN) as the client's `apiKey`. */
    accounts: {
      // the operator's requests keep no Idempotency-Key: a second account would be made
      create: (params: NewAccountParams, opts?: RequestOptions) =>
        request<NewAccountKeys>('POST', '/v2/accounts', params, opts, false),
      delete: (id: string, opts?: RequestOptions) =>
        request<DeletedAccount>('DELETE', `/v2/accounts/${enc(id)}`, undefined, opts),
    },
    /**
     * Every object of a list, page after page: `for await (const c of jackdaw.all(jackdaw.charges.list, {status: 'failed'}))`.
     */
    async *all<T extends { id?: string | undefined }, P extends ListParams>(
      list: (params?: P, opts?: RequestOptions) => Promise<List<T>>,
      // the list's own parameters, as its function takes them (a status filter, say)
      params: NoInfer<P> = {} as P,
      opts?: RequestOptions,
    ): AsyncGenerator<T> {
      let page = await list(params, opts)
      for (;;) {
        yield* page.data
        const last = page.data[page.data.length - 1]
        if (!page.next || !last?.id) return
        page = await list({ ...params, start_after: last.id }, opts)
      }
    },
  }
}

export type JackdawClient = ReturnType<typeof createClient>
