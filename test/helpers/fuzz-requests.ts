import fc from 'fast-check'
import { MAX_AMOUNT } from '../../src/domain/money.js'
import { basic } from './app.js'
import {
  anythingAsJson,
  email,
  MALFORMED,
  metadata,
  mutatedBody,
  RAW_NUMBERS,
  storableText,
  textP,
  toText,
  validSourceBody,
  weirdChar,
  weirdString,
  weirdValue,
} from './fuzz-generators.js'

/**
 * fast-check arbitraries of whole requests: every route of the interface with a valid body to
 * start from, urls with ids of objects in each state (and odd path segments), keys and headers.
 * The ids come from fixtures a fuzz test makes on its own store.
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

/** Percent-encodes UTF-8 bytes (a lone surrogate becomes U+FFFD, as a browser would send it). */
export const pct = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('')

export const ODD_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E',
  '%00',
  'a%00b',
  'ch_%00',
  '%2F',
  'a%2Fb',
  '%5C',
  '%',
  '%zz',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%EF%BB%BF',
  '%E2%80%AE',
  '~',
  '*',
  '%20',
  '+',
  ';',
  ';a=b',
  '@',
  'null',
  'undefined',
  '0',
  '-1',
  'ch_',
  'src_',
  'cus_',
  `ch_${'0'.repeat(32)}`,
  `src_${'f'.repeat(32)}`,
  `cus_${'0'.repeat(31)}g`,
  'by_email',
]

export const oddSegment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ODD_SEGMENTS) },
  { weight: 4, arbitrary: fc.string({ unit: weirdChar, minLength: 1, maxLength: 40 }).map(pct) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('a', '%41', '%C3%A9', 'ch_'), fc.integer({ min: 95, max: 1500 }))
      .map(([c, n]) => c.repeat(Math.ceil(n / c.length))),
  },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom('a', '..', '.', '', '%2F'), { maxLength: 4 }).map((p) => p.join('/')),
  },
)

export function idArb(f: Fixtures, kind: IdKind): fc.Arbitrary<string> {
  const own = kind === 'email' ? f.email.map(pct) : f[kind]
  const all = [...f.src, ...f.ch, ...f.cus, ...f.evt, ...f.dlv, ...f.foreign]
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...(own.length > 0 ? own : ['x'])) },
    { weight: 2, arbitrary: fc.constantFrom(...all) },
    { weight: 3, arbitrary: oddSegment },
  )
}

export const fillPath = (path: string, ids: Partial<Record<string, string>>) =>
  path.replace(/:(\w+)/g, (_m, kind: string) => ids[kind] ?? 'x')

/** A url of the route, with random ids: objects of each state, foreign ids and odd segments. */
export function urlArb(f: Fixtures, route: Route): fc.Arbitrary<string> {
  const kinds = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1] as IdKind)
  if (kinds.length === 0) return fc.constant(route.path)
  const preferred = route.charges ? f.state[route.charges] : []
  const record = Object.fromEntries(
    kinds.map((k) => [
      k,
      k === 'ch' && preferred.length > 0
        ? fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...preferred) }, { weight: 2, arbitrary: idArb(f, k) })
        : idArb(f, k),
    ]),
  )
  return fc.record(record).map((ids) => fillPath(route.path, ids))
}

export function keyArb(f: Fixtures, route: Route): fc.Arbitrary<string | undefined> {
  if (route.auth === 'none') return fc.constant(undefined)
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(route.auth === 'public' ? f.keys.pkTest : f.keys.skTest) },
    { weight: 1, arbitrary: fc.constantFrom(f.keys.skTest, f.keys.pkTest, f.keys.skLive, f.keys.pkLive) },
  )
}

/** The value with probability p, else undefined (a header left out). */
export const sometimes = <T>(arb: fc.Arbitrary<T>, p: number): fc.Arbitrary<T | undefined> =>
  fc.oneof(
    { weight: Math.round(p * 100), arbitrary: arb },
    { weight: Math.round((1 - p) * 100), arbitrary: fc.constant(undefined) },
  )

/** A hosted-page body with the page's token in it, when the body is a JSON object. */
export function withToken(body: string, token: string): string {
  try {
    const parsed = JSON.parse(body) as unknown
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return toText({ token, ...parsed })
  } catch {}
  return body
}

export function headersFor(key: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return { ...(key ? { authorization: basic(key) } : {}), ...extra }
}

/** Every kind of body text, for a route with (or without) a valid body to start from. */
export function bodyText(f: Fixtures, route: Route): fc.Arbitrary<string> {
  const valid = route.body ? route.body(f) : fc.constant({})
  return fc.oneof(
    { weight: 4, arbitrary: mutatedBody(valid) },
    { weight: 2, arbitrary: valid.map(toText) },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
    { weight: 1, arbitrary: anythingAsJson },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED) },
    { weight: 1, arbitrary: fc.dictionary(weirdString, weirdValue, { maxKeys: 6 }).map(toText) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.constantFrom(...RAW_NUMBERS), { minLength: 1, maxLength: 3 })
        .map((ns) => `{${ns.map((n, i) => `"${['amount', 'limit', 'metadata', 'source'][i % 4]}":${n}`).join(',')}}`),
    },
  )
}

/**
 * One parameter of a query string: limit, start_after and names a parser may trip on, with values
 * that are ids of the fixtures, not-quite-numbers and odd percent-encodings; or a bare name or
 * separator.
 */
export function queryParam(f: Fixtures): fc.Arbitrary<string> {
  const all = () => [...f.src, ...f.ch, ...f.cus, ...f.evt, ...f.dlv, ...f.foreign]
  const value = fc.oneof(
    fc.constantFrom(
      '',
      '0',
      '1',
      '20',
      '100',
      '101',
      '-1',
      '-0',
      '1e2',
      '1e308',
      '1.5',
      '0x10',
      '%205',
      '5%20',
      'NaN',
      'Infinity',
      'true',
      '[]',
      '%00',
      '%ED%A0%80',
      '%',
      '%zz',
      '9'.repeat(400),
      '00000000001',
    ),
    fc.constantFrom(...all()),
    oddSegment,
    fc.string({ unit: weirdChar, maxLength: 20 }).map(pct),
  )
  const name = fc.constantFrom(
    'limit',
    'start_after',
    'token',
    'Limit',
    'LIMIT',
    'limit[]',
    'start_after[0]',
    'start_after[a]',
    '__proto__',
    'constructor',
    'hasOwnProperty',
    'foo',
    '',
    '%00',
    'limit%00',
  )
  return fc.oneof(
    { weight: 6, arbitrary: fc.tuple(name, value).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: name },
    { weight: 1, arbitrary: fc.constantFrom('=', '&', '==', 'limit==1', ';limit=1', 'limit=1;start_after=x') },
  )
}
