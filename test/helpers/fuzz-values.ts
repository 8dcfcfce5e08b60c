import fc from 'fast-check'

/**
 * fast-check arbitraries of odd text and values (not-quite-numbers, control characters, deep
 * nesting, malformed JSON) for the properties that must refuse them cleanly.
 */

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
