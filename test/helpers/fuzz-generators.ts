import fc from 'fast-check'
import { TEST_CARDS } from '../../src/domain/card.js'
import { SPEC_SOURCE_TYPES } from './spec.js'

/**
 * fast-check arbitraries of request bodies: odd text and values (not-quite-numbers, control
 * characters, deep nesting) for the properties that must refuse them cleanly, and valid bodies
 * within the interface's bounds and pattern P for those that must accept them.
 */

// ---------------------------------------------------------------------------------------------
// Text, values and bodies
// ---------------------------------------------------------------------------------------------

export const RAW = '\u0001raw:'
/** A number (or not-quite-number) written into the JSON text verbatim. */
export const raw = (text: string) => `${RAW}${text}`
/** JSON text of a value, with the raw tokens put in verbatim. */
export const toText = (v: unknown): string =>
  (JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? '').replace(
    /"\\u0001raw:([^"]*)"/g,
    '$1',
  )

export const RAW_NUMBERS = [
  '-0',
  '0',
  '-1',
  '1e308',
  '-1e308',
  '1.7976931348623157e308',
  '1e999',
  '-1e999',
  '5e-324',
  '1e-400',
  '1E+2',
  '1.0',
  '0.5',
  '99999999999',
  '100000000000',
  '9007199254740993',
  '123456789012345678901234567890',
  '2147483648',
  '0e0',
  // not JSON: the body is malformed
  'NaN',
  'Infinity',
  '-Infinity',
  '+1',
  '.5',
  '01',
  '0x10',
]

export const WHITESPACE_P = [
  ' ',
  '\t',
  '\n',
  '\r',
  '\v',
  '\f',
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u200a',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
]

export const codePoint = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })
export const weirdChar = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: codePoint },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u00ad') },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom(...WHITESPACE_P, '\u200b', '\u202e', '\u0301', '🦜', '👩‍👩‍👧') },
  { weight: 1, arbitrary: fc.constantFrom('"', '\\', '/', '%', "'", '<', '>', '&', '$', '{', '}', '~') },
)

export const longString = fc
  .tuple(fc.constantFrom('a', 'é', '🦜', ' ', "'", '0', '\u0000'), fc.integer({ min: 200, max: 4000 }))
  .map(([c, n]) => c.repeat(n))

export const weirdString: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: weirdChar, maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: longString },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'null',
      'true',
      '0',
      '-0',
      'NaN',
      '1e308',
      'card',
      'approve',
      'usd',
      '<script>alert(1)</script>',
      "'; DROP TABLE charges; --",
      '%s%n%x',
      '../../etc/passwd',
      '__proto__',
      'javascript:alert(1)',
      'https://shop.example/ok',
      'a@b.co',
      '4242424242424242',
    ),
  },
)

export const weirdValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: weirdString },
    { weight: 3, arbitrary: fc.constantFrom(...RAW_NUMBERS).map(raw) },
    { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })) },
    { weight: 2, arbitrary: fc.constantFrom(null, true, false, {}, [], [[[]]]) },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(weirdString, tie('value'), { maxKeys: 4 }) },
  ),
})).value

/** fc.anything, made JSON (undefined and functions vanish, NaN becomes null, -0 becomes 0). */
export const anythingAsJson = fc.anything({ maxDepth: 4 }).map((v) => {
  try {
    return toText(v)
  } catch {
    return 'null'
  }
})

export const MALFORMED = [
  '',
  ' ',
  '\n',
  'null',
  'true',
  '0',
  '"text"',
  '[]',
  '{}',
  '{',
  '}',
  '{"a":}',
  '{"a" 1}',
  "{'a':1}",
  '{"a":1,}',
  '[1,]',
  '{"a":1}{"b":2}',
  '{"a":1} x',
  '/* c */ {}',
  '{"a":NaN}',
  '{"a":undefined}',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"a":"\\u0000"}',
  '{"a":"\\ud800"}',
  '{"\\ud800":1}',
  '{"a":"\\x41"}',
  '{"a":"\u0001"}',
  '\ufeff{}',
  '{"type":"card","type":"wallet_a"}',
  '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]',
]

// ---------------------------------------------------------------------------------------------
// Valid bodies: the interface's bounds and pattern P
// ---------------------------------------------------------------------------------------------

export const P_CHARS = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  "'",
  '#',
  '_',
  '.',
  '-',
  ',',
  ...WHITESPACE_P,
]
export const pChar = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...P_CHARS.slice(0, 62)) },
  { weight: 2, arbitrary: fc.constantFrom("'", '#', '_', '.', '-', ',', ' ') },
  { weight: 1, arbitrary: fc.constantFrom(...WHITESPACE_P) },
)
/** A string matching pattern P, between min and max characters. */
export const textP = (min: number, max: number) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: pChar, minLength: min, maxLength: Math.min(max, 40) }) },
    { weight: 1, arbitrary: fc.string({ unit: pChar, minLength: Math.max(min, max - 3), maxLength: max }) },
  )

/** Text of any Unicode scalar values except NUL (which no store keeps). */
export const storableText = (min: number, max: number) =>
  fc
    .string({ unit: 'binary', minLength: min, maxLength: max })
    .map((s) => s.replaceAll('\u0000', ' '))
    .filter((s) => [...s].length >= min)

export const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n })

export function luhnComplete(body: number[]): string {
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    let d = body[body.length - 1 - i] as number
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return `${body.join('')}${(10 - (sum % 10)) % 10}`
}

export const cardNumber = fc.oneof(
  fc.constantFrom(...TEST_CARDS.map((c) => c.number)),
  fc.integer({ min: 12, max: 19 }).chain((n) => digits(n - 1).map(luhnComplete)),
)

export const now = new Date()
export const THIS_YEAR = now.getUTCFullYear()
export const THIS_MONTH = now.getUTCMonth() + 1

export const futureExpiry = fc
  .tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 12 }), fc.boolean())
  .map(([years, m, pad]) => {
    const month = years === 0 ? Math.max(m, THIS_MONTH) : m
    return { exp_month: pad ? String(month).padStart(2, '0') : String(month), exp_year: String(THIS_YEAR + years) }
  })

export const cardInput = fc
  .record(
    {
      name: textP(1, 50),
      number: cardNumber,
      expiry: futureExpiry,
      cvc: fc.integer({ min: 3, max: 4 }).chain((n) => digits(n).map((d) => d.join(''))),
      address_line1: textP(1, 255),
      address_line2: textP(1, 255),
      address_city: textP(1, 255),
      address_state: textP(1, 255),
      address_country: textP(1, 255),
      address_zip: textP(1, 50),
    },
    { requiredKeys: ['name', 'number', 'expiry', 'cvc'] },
  )
  .map(({ expiry, ...card }) => ({ ...card, ...expiry }))

export const email = fc
  .tuple(
    fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,20}[a-z0-9]$/),
    fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/),
    fc.constantFrom('com', 'example', 'co', 'ph', 'museum'),
  )
  .map(([local, domain, tld]) => `${local.replace(/\.\.+/g, '.')}@${domain}.${tld}`)

export const uri = fc.webUrl({ withQueryParameters: true, withFragments: true }).filter((u) => u.length <= 2083)

export const address = fc.record(
  {
    name: textP(1, 50),
    phone_number: textP(1, 50),
    email,
    line1: textP(1, 255),
    line2: textP(1, 255),
    city: textP(1, 100),
    state: textP(1, 50),
    country: textP(1, 50),
    zip_code: textP(1, 50),
  },
  { requiredKeys: ['name'] },
)

export const owner = fc.record(
  { billing: address, shipping: address, name: storableText(0, 50), address_country: textP(1, 50) },
  { requiredKeys: [] },
)
/** A valid create-source body: card sources carry a card, the others a redirect (docs). */
export const validSourceBody = (withNotify: boolean) =>
  fc.constantFrom(...SPEC_SOURCE_TYPES).chain((type) =>
    fc
      .record(
        {
          card: cardInput,
          redirect: fc.record(
            { success: uri, fail: uri, ...(withNotify ? { notify: uri } : {}) },
            { requiredKeys: ['success', 'fail'] },
          ),
          owner,
          withRedirect: fc.boolean(),
          withOwner: fc.boolean(),
        },
        { requiredKeys: ['card', 'redirect', 'owner', 'withRedirect', 'withOwner'] },
      )
      .map(({ card, redirect, owner: o, withRedirect, withOwner }) => {
        const body: Record<string, unknown> = { type }
        if (type === 'card') body.card = card
        if (type !== 'card' || withRedirect) body.redirect = redirect
        if (withOwner) body.owner = o
        return body
      }),
  )

export const metadata = fc.dictionary(
  storableText(1, 40),
  fc.oneof(storableText(0, 500), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean()),
  { maxKeys: 5 },
)

// ---- paths inside a JSON value, and one-field mutations of a valid body ----

type Path = (string | number)[]

function pathsOf(v: unknown, prefix: Path = []): Path[] {
  const out: Path[] = []
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push([...prefix, i], ...pathsOf(x, [...prefix, i]))
    })
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) out.push([...prefix, k], ...pathsOf(x, [...prefix, k]))
  }
  return out
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> | undefined {
  let cur = root as Record<string | number, unknown>
  for (const p of path.slice(0, -1)) cur = cur?.[p] as Record<string | number, unknown>
  return cur
}

function retype(v: unknown): unknown {
  if (typeof v === 'string') return /^\d+$/.test(v) ? Number(v) : [v]
  if (typeof v === 'number') return String(v)
  if (typeof v === 'boolean') return String(v)
  if (v === null) return {}
  if (Array.isArray(v)) return v.length > 0 ? v[0] : null
  return [v]
}

type Mutation = 'remove' | 'replace' | 'retype' | 'extra' | 'long' | 'unicode' | 'nest'

/** A valid body with one field removed, replaced, retyped, stretched or joined by an extra one. */
export const mutatedBody = (valid: fc.Arbitrary<unknown>) =>
  fc
    .tuple(
      valid,
      fc.nat(),
      fc.constantFrom<Mutation>('remove', 'replace', 'retype', 'extra', 'long', 'unicode', 'nest'),
      weirdValue,
      weirdString,
      longString,
    )
    .map(([body, pick, op, value, key, long]) => {
      const copy = structuredClone(body) as Record<string | number, unknown>
      const paths = pathsOf(copy)
      const path = paths.length > 0 ? (paths[pick % paths.length] as Path) : []
      const parent = path.length > 0 ? parentOf(copy, path) : undefined
      const last = path[path.length - 1] as string | number
      if (op === 'extra' || !parent) {
        const target = parent && typeof parent[last] === 'object' && parent[last] !== null ? parent[last] : copy
        ;(target as Record<string, unknown>)[key || 'extra'] = value
      } else if (op === 'remove') {
        if (Array.isArray(parent)) parent.splice(last as number, 1)
        else delete parent[last]
      } else if (op === 'replace') parent[last] = value
      else if (op === 'retype') parent[last] = retype(parent[last])
      else if (op === 'long') parent[last] = long
      else if (op === 'unicode') parent[last] = `${String(parent[last])}${key}`
      else parent[last] = [[{ [last]: parent[last] }]]
      return toText(copy)
    })
