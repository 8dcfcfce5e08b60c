import fc from 'fast-check'
import { basic } from './app.js'
import type { Fixtures } from './fuzz-routes.js'

/**
 * fast-check arbitraries of headers: the values a client may send in Authorization,
 * Idempotency-Key, Content-Type, Content-Length and Accept, and the ways a request may be broken
 * on the wire before any header is read.
 */

// what an HTTP/1.1 parser lets into a header value: tab, visible ASCII, space, obs-text
const headerChar = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constant('\t') },
)

/** Header text of min to max characters, no space at either end. */
export const headerText = (min: number, max: number) =>
  fc
    .string({ unit: headerChar, minLength: min, maxLength: max })
    .map((s) => s.trim())
    .filter((s) => s.length >= min)

/** An Authorization header: mostly one of the valid keys, in every way it may be mangled. */
export function authorizationHeader(keys: Fixtures['keys']): fc.Arbitrary<string> {
  const validKey = fc.constantFrom(...Object.values(keys))
  return fc.oneof(
    { weight: 20, arbitrary: fc.constant(basic(keys.skTest)) },
    { weight: 10, arbitrary: validKey.map((k) => basic(k)) },
    { weight: 1, arbitrary: fc.tuple(validKey, headerText(0, 20)).map(([k, p]) => basic(k, p)) },
    { weight: 1, arbitrary: validKey.map((k) => `Bearer ${k}`) },
    { weight: 1, arbitrary: validKey.map((k) => `bEaReR   ${k}   `) },
    { weight: 1, arbitrary: validKey.map((k) => `Basic ${Buffer.from(k).toString('base64')}`) },
    { weight: 1, arbitrary: validKey.map((k) => `Basic ${Buffer.from(`${k}:`).toString('base64url')}`) },
    { weight: 1, arbitrary: validKey.map((k) => `Bearer ${k.slice(0, -1)}`) },
    { weight: 1, arbitrary: validKey.map((k) => `Bearer ${k}x`) },
    { weight: 1, arbitrary: validKey.map((k) => `Basic ${Buffer.from(`:${k}`).toString('base64')}`) },
    {
      weight: 2,
      arbitrary: fc.uint8Array({ maxLength: 80 }).map((b) => `Basic ${Buffer.from(b).toString('base64')}`),
    },
    { weight: 2, arbitrary: headerText(0, 60).map((s) => `Basic ${s}`) },
    { weight: 2, arbitrary: headerText(0, 60).map((s) => `Bearer ${s}`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('sk_test_', 'pk_test_', 'sk_live_', 'pk_live_', 'sk_', 'rk_test_'), headerText(0, 40))
        .map(([p, s]) => `Bearer ${p}${s.replace(/\s/g, '')}`),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        'Basic',
        'Bearer',
        'Basic ',
        'Bearer ',
        'Basic =',
        'Basic ====',
        'Basic Og==',
        'Basic OjpkOg==',
        'Basic !!!',
        'Digest username="x"',
        'Negotiate abc',
        'Basic\tabc',
        `Basic ${'A'.repeat(8000)}`,
      ),
    },
    { weight: 2, arbitrary: headerText(0, 80) },
  )
}

export const idempotencyKeyHeader = fc.oneof(
  fc.constantFrom('k-1', 'k-2', 'same', ' ', 'a'.repeat(255), 'a'.repeat(256), 'é', 'k-1, k-2'),
  headerText(1, 300),
)

export const contentTypeHeader = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json; charset=utf-16',
    'application/json; charset=utf-16le',
    'application/json; charset=latin1',
    'application/json; charset=',
    'application/json;charset="utf-8"',
    'application/json; boundary=x',
    'APPLICATION/JSON',
    'application/json, text/plain',
    'application/jsonx',
    'application/vnd.api+json',
    'application/merge-patch+json',
    'text/json',
    'text/plain',
    'text/plain; charset=utf-8',
    'text/html',
    'multipart/form-data',
    'multipart/form-data; boundary=----x',
    'application/x-www-form-urlencoded',
    'application/xml',
    'application/octet-stream',
    '*/*',
    'application/*',
    '',
    ';',
    '/',
    'json',
  ),
  headerText(0, 60),
)

export const contentLengthHeader = fc.constantFrom('0', '1', '2', '5', '100', '99999999', '-1', 'abc', '1.5', ' 2')

export const acceptHeader = fc.oneof(
  fc.constantFrom('*/*', 'text/html', 'application/xml', 'application/json;q=0', 'image/*'),
  headerText(0, 40),
)

/** How the body text is encoded into bytes. */
export const bodyEncoding = fc.constantFrom<BufferEncoding>('utf8', 'utf16le', 'latin1')

const byte = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xff }) },
)
const bytes = (max: number) =>
  fc.array(byte, { minLength: 1, maxLength: max }).map((b) => Buffer.from(b).toString('latin1'))

/**
 * A way to break an HTTP/1.1 request on the wire: odd bytes in a header value or name, a line
 * without a colon, smuggling headers, a bad version, method or target, bare LF line ends.
 */
export const wireCorruption = fc.oneof(
  bytes(40).map((v) => ({ kind: 'header value', header: `X-Odd: ${v}` })),
  bytes(40).map((v) => ({ kind: 'authorization', header: `Authorization: Basic ${v}` })),
  bytes(40).map((v) => ({ kind: 'idempotency key', header: `Idempotency-Key: ${v}` })),
  bytes(20).map((v) => ({ kind: 'header name', header: `${v}: 1` })),
  fc.constantFrom(
    { kind: 'no colon', header: 'Garbage' },
    { kind: 'huge header', header: `X-Big: ${'a'.repeat(20_000)}` },
    { kind: 'smuggling', header: 'Transfer-Encoding: chunked' },
    { kind: 'two lengths', header: 'Content-Length: 3' },
    { kind: 'obs-fold', header: 'X-Fold: a\r\n b' },
    { kind: 'bad version', version: 'HTTP/9.9' },
    { kind: 'bad method', method: 'G@T' },
    { kind: 'space in target', target: '/v2/ch arges/' },
    { kind: 'high bytes in target', target: '/v2/charges/\xe9\xff' },
    { kind: 'empty target', target: '?x' },
    { kind: 'lf only', eol: '\n' },
  ),
)
