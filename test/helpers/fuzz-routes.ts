import fc from 'fast-check'
import { MAX_AMOUNT } from '../../src/domain/money.js'
import { email, metadata, storableText, textP, validSourceBody } from './fuzz-valid-bodies.js'

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
}

export type IdKind = 'src' | 'ch' | 'cus' | 'evt' | 'dlv' | 'email'

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  auth: 'public' | 'secret' | 'none'
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
]

export const BODY_ROUTES = ROUTES.filter((r) => r.method === 'POST' || r.method === 'PUT')
export const MUTATING_ROUTES = ROUTES.filter((r) => r.method !== 'GET')
export const LIST_ROUTES = ROUTES.filter((r) => r.method === 'GET' && !r.path.includes(':'))
