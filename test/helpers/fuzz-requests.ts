import fc from 'fast-check'
import { basic } from './app.js'
import { mutatedBody } from './fuzz-mutations.js'
import type { Fixtures, IdKind, Route } from './fuzz-routes.js'
import { anythingAsJson, MALFORMED, RAW_NUMBERS, toText, weirdChar, weirdString, weirdValue } from './fuzz-values.js'

/**
 * fast-check arbitraries of whole requests: urls with ids of objects in each state (and odd path
 * segments), keys, headers, body text and query parameters, for the routes of fuzz-routes.ts.
 * The ids come from fixtures a fuzz test makes on its own store.
 */

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

/** The operator's token (JACKDAW_ADMIN_TOKEN) of the fuzzed app, which POST and DELETE /v2/accounts take. */
export const ADMIN_TOKEN = 'fuzz-operator-token-0123456789'

/** The key a route is called with: the one it takes, of the account it acts on. */
export function keyOf(f: Fixtures, route: Route): string | undefined {
  if (route.auth === 'none') return undefined
  if (route.auth === 'admin') return ADMIN_TOKEN
  const keys = route.sandbox ? f.sandbox.keys : f.keys
  return route.auth === 'public' ? keys.pkTest : keys.skTest
}

/**
 * Mostly the route's own key, else another one it may refuse. A test-mode route is never given
 * the main account's secret key: what a valid request does there (moving the clock a year on,
 * failing every capture by rule) would change what the other routes answer.
 */
export function keyArb(f: Fixtures, route: Route): fc.Arbitrary<string | undefined> {
  if (route.auth === 'none') return fc.constant(undefined)
  const { skTest, pkTest, skLive, pkLive } = f.keys
  const s = f.sandbox.keys
  const others =
    route.auth === 'admin'
      ? [skTest, pkTest, skLive, s.skTest]
      : route.sandbox
        ? [s.skTest, s.pkTest, s.skLive, s.pkLive, pkTest, skLive]
        : [skTest, pkTest, skLive, pkLive]
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(keyOf(f, route)) },
    { weight: 1, arbitrary: fc.constantFrom(...others) },
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

/** The Authorization header of a key: HTTP Basic, or Bearer for the operator's token (docs/testing.md). */
export const authorization = (key: string) => (key === ADMIN_TOKEN ? `Bearer ${key}` : basic(key))

export function headersFor(key: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return { ...(key ? { authorization: authorization(key) } : {}), ...extra }
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
