import fc from 'fast-check'
import { MAX_AMOUNT } from '../../src/domain/money.js'
import { MAX_CLOCK_ADVANCE_SECONDS } from '../../src/domain/time.js'
import { MAX_FAULT_RULES } from '../../src/schemas/test-faults.js'
import { email, faultRule, metadata, storableText, textP, uri, validSourceBody } from './fuzz-valid-bodies.js'

/**
 * The routes of the interface as the fuzz tests see them: each with its method, path, key and a
 * valid body to start from, and the fixtures (ids of objects in each state) the bodies and urls use.
 */

/** Ids of objects made on the store under test, in every state a route needs. */
export interface Fixtures {
  src: string[]
  ch: string[]
  cus: string[]
  evt: string[]
  dlv: string[]
  email: string[]
  /** hosted-page tokens of pending charges, with their charge */
  hosted: { ch: string; token: string }[]
  confirmation: string[]
  /** charges in the state an operation needs: so that the operation is reached often */
  state: { authorized: string[]; captured: string[]; pending: string[]; otp: string[] }
  /** ids of the other mode: never visible to a test key */
  foreign: string[]
  keys: { skTest: string; pkTest: string; skLive: string; pkLive: string }
  /**
   * A second account, the one the test-mode routes (clock, fault rules, scenarios) are called
   * with: what they do when they succeed (a clock moved a year on, operations failing by rule,
   * charges expired) stays off the account the other routes use. `cus`: its customers.
   */
  sandbox: { keys: Fixtures['keys']; cus: string[] }
  /** accounts DELETE /v2/accounts/:acct may remove: never the two above */
  acct: string[]
  /** the names of the scenarios */
  scenario: string[]
}

export type IdKind = 'src' | 'ch' | 'cus' | 'evt' | 'dlv' | 'email' | 'acct' | 'scenario'

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  /** the key the route takes: an account's public or secret key, the operator's token, or none */
  auth: 'public' | 'secret' | 'admin' | 'none'
  /** called with the sandbox account's keys (Fixtures.sandbox), never with the main account's secret key */
  sandbox?: true
  /** a valid (or nearly valid: ids of objects in any state) body */
  body?: (f: Fixtures) => fc.Arbitrary<unknown>
  /** charges in the state the operation needs, picked more often than the others */
  charges?: keyof Fixtures['state']
}

export const amount = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 10_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: MAX_AMOUNT }) },
)

export const ROUTES: Route[] = [
  { method: 'POST', path: '/v2/sources/', auth: 'public', body: () => validSourceBody(false) },
  { method: 'GET', path: '/v2/sources/:src', auth: 'public' },
  {
    method: 'POST',
    path: '/v2/charges/',
    auth: 'secret',
    body: (f) =>
      fc.record(
        {
          amount,
          currency: fc.constantFrom('usd', 'USD', 'eur', 'jpy', 'php', 'bhd', 'xts', 'Usd', 'xxx', 'zzz'),
          source: fc.constantFrom(...f.src, ...f.foreign),
          description: storableText(1, 255),
          statement_descriptor: textP(3, 100),
          capture: fc.boolean(),
          require_auth: fc.boolean(),
          customer: fc.constantFrom(...f.cus, ...f.foreign),
          metadata,
        },
        { requiredKeys: ['amount', 'currency', 'source'] },
      ),
  },
  { method: 'GET', path: '/v2/charges/', auth: 'secret' },
  { method: 'GET', path: '/v2/charges/:ch', auth: 'secret' },
  {
    method: 'POST',
    path: '/v2/charges/:ch/capture',
    auth: 'secret',
    charges: 'authorized',
    body: () => fc.record({ amount }, { requiredKeys: [] }),
  },
  {
    method: 'POST',
    path: '/v2/charges/:ch/void',
    auth: 'secret',
    charges: 'authorized',
    body: () => fc.constant({}),
  },
  {
    method: 'POST',
    path: '/v2/charges/:ch/refund',
    auth: 'secret',
    charges: 'captured',
    body: () => fc.record({ amount, reason: storableText(1, 255) }, { requiredKeys: [] }),
  },
  {
    method: 'POST',
    path: '/v2/charges/:ch/verify',
    auth: 'secret',
    charges: 'otp',
    body: (f) =>
      fc.record({
        confirmation_id: fc.oneof(fc.constantFrom(...f.confirmation), storableText(5, 255)),
        otp: fc.constantFrom('123456', '000000', '1', '9999999999', '12345'),
      }),
  },
  {
    method: 'POST',
    path: '/v2/test/charges/:ch/authorize',
    auth: 'secret',
    charges: 'pending',
    body: () => fc.record({ decision: fc.constantFrom('approve', 'decline') }),
  },
  {
    method: 'POST',
    path: '/v2/customers/',
    auth: 'secret',
    body: () =>
      fc.record(
        { email, description: storableText(1, 255), mobile_number: storableText(5, 25), metadata },
        { requiredKeys: ['email', 'description'] },
      ),
  },
  { method: 'GET', path: '/v2/customers/', auth: 'secret' },
  { method: 'GET', path: '/v2/customers/:cus', auth: 'secret' },
  {
    method: 'PUT',
    path: '/v2/customers/:cus',
    auth: 'secret',
    body: () =>
      fc.record(
        { description: storableText(1, 255), mobile_number: storableText(5, 25), metadata },
        { requiredKeys: [] },
      ),
  },
  { method: 'DELETE', path: '/v2/customers/:cus', auth: 'secret' },
  { method: 'GET', path: '/v2/customers/by_email/:email', auth: 'secret' },
  {
    method: 'POST',
    path: '/v2/customers/:cus/sources',
    auth: 'secret',
    body: (f) => fc.record({ source: fc.constantFrom(...f.src, ...f.foreign) }),
  },
  { method: 'DELETE', path: '/v2/customers/:cus/sources/:src', auth: 'secret' },
  { method: 'GET', path: '/v2/me', auth: 'secret' },
  { method: 'POST', path: '/v2/me/webhook_secret/roll', auth: 'secret', body: () => fc.constant({}) },
  { method: 'GET', path: '/v2/events/', auth: 'secret' },
  { method: 'GET', path: '/v2/events/:evt', auth: 'secret' },
  { method: 'GET', path: '/v2/deliveries/', auth: 'secret' },
  { method: 'GET', path: '/v2/deliveries/:dlv', auth: 'secret' },
  { method: 'POST', path: '/v2/deliveries/:dlv/redeliver', auth: 'secret', body: () => fc.constant({}) },
  { method: 'GET', path: '/v2/hosted/charges/:ch', auth: 'none' },
  {
    method: 'POST',
    path: '/v2/hosted/charges/:ch',
    auth: 'none',
    charges: 'pending',
    body: () => fc.record({ decision: fc.constantFrom('approve', 'decline', 'maybe', '') }),
  },
  { method: 'GET', path: '/v2/test/clock', auth: 'secret', sandbox: true },
  {
    method: 'POST',
    path: '/v2/test/clock/advance',
    auth: 'secret',
    sandbox: true,
    body: () =>
      fc.record({
        seconds: fc.oneof(
          fc.integer({ min: 1, max: 86_400 }),
          fc.integer({ min: 1, max: MAX_CLOCK_ADVANCE_SECONDS }),
          fc.constant(MAX_CLOCK_ADVANCE_SECONDS),
        ),
      }),
  },
  { method: 'GET', path: '/v2/test/faults', auth: 'secret', sandbox: true },
  {
    method: 'PUT',
    path: '/v2/test/faults',
    auth: 'secret',
    sandbox: true,
    body: () => fc.record({ rules: fc.array(faultRule, { maxLength: MAX_FAULT_RULES }) }),
  },
  { method: 'GET', path: '/v2/test/scenarios', auth: 'secret', sandbox: true },
  {
    method: 'POST',
    path: '/v2/test/scenarios/:scenario',
    auth: 'secret',
    sandbox: true,
    // mostly the overrides of a charge, which all but customer.source_attached take; or any of
    // them, each scenario refusing those it does not take (422)
    body: (f) =>
      fc.oneof(
        fc.record(
          { amount: fc.integer({ min: 2, max: 100_000 }), currency: fc.constantFrom('usd', 'eur', 'php'), metadata },
          { requiredKeys: [] },
        ),
        fc.record(
          {
            amount,
            currency: fc.constantFrom('usd', 'jpy', 'USD', 'xxx'),
            metadata,
            customer: fc.oneof(
              fc.constantFrom(...f.sandbox.cus, ...f.cus),
              fc.record({ email, description: storableText(1, 255) }),
            ),
            decline_code: fc.constantFrom('card_declined', 'insufficient_funds', 'processor_timeout', 'nope'),
            notify: uri,
          },
          { requiredKeys: [] },
        ),
      ),
  },
  {
    method: 'POST',
    path: '/v2/accounts',
    auth: 'admin',
    body: () =>
      fc.oneof(
        fc.record({ name: textP(1, 100), deterministic: fc.constant(false) }, { requiredKeys: ['name'] }),
        fc.record({
          name: storableText(1, 100),
          deterministic: fc.constant(true),
          seed: fc.oneof(textP(1, 100), fc.nat()),
        }),
      ),
  },
  { method: 'DELETE', path: '/v2/accounts/:acct', auth: 'admin' },
]

/**
 * GET /v2/events/stream is left out: a stream it opens never ends, which the properties' requests
 * cannot wait for (fuzz-queries.test.ts sends it its bad queries and headers over a socket).
 */
export const NOT_FUZZED = [{ method: 'GET', path: '/v2/events/stream' }] as const

export const BODY_ROUTES = ROUTES.filter((r) => r.method === 'POST' || r.method === 'PUT')
export const MUTATING_ROUTES = ROUTES.filter((r) => r.method !== 'GET')
export const LIST_ROUTES = ROUTES.filter((r) => r.method === 'GET' && !r.path.includes(':'))
