import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TEST_CARD } from '../helpers/app.js'
import { fillPath, headersFor, keyOf } from '../helpers/fuzz-requests.js'
import { BODY_ROUTES, MUTATING_ROUTES, ROUTES, type Route } from '../helpers/fuzz-routes.js'
import { toText } from '../helpers/fuzz-values.js'
import {
  checkAnswer,
  checkEnvelope,
  f,
  fail,
  knownBug,
  params,
  type Req,
  send,
  TIMEOUT,
  t,
  useFuzzApp,
} from './fuzz-harness.js'

/**
 * Fuzzing the body limits (see fuzz-harness.ts for the properties and the environment): bodies
 * over the size limit are 413 before they are parsed; deep nesting and thousands of keys are
 * refused (400/413/422), never a crash.
 */

useFuzzApp()

// ---------------------------------------------------------------------------------------------
// 2. Huge and deeply nested bodies
// ---------------------------------------------------------------------------------------------

describe('fuzz: huge and deeply nested bodies', () => {
  const LIMIT = 65_536

  const jsonRequest = (route: Route, payload: string | Buffer, url = fillPath(route.path, {})): Req => ({
    method: route.method,
    url,
    headers: headersFor(keyOf(f, route), { 'content-type': 'application/json' }),
    payload,
  })
  const urlOf = (route: Route) =>
    fillPath(route.path, {
      ch: f.ch[0],
      cus: f.cus[0],
      src: f.src[0],
      evt: f.evt[0],
      dlv: f.dlv[0],
      email: 'x',
      acct: f.acct[0],
      scenario: 'charge.succeeded',
    })

  it(
    'a body over the limit is 413 body_too_large before it is parsed, on every endpoint that takes one',
    async () => {
      const filler = fc.constantFrom('x', ' ', '{', '€', '"', 'a":1,"')
      const req = fc
        .record({
          route: fc.constantFrom(...MUTATING_ROUTES),
          size: fc.oneof(fc.constant(LIMIT + 1), fc.integer({ min: LIMIT + 1, max: 4 * LIMIT })),
          filler,
          valid: fc.boolean(),
        })
        .map(({ route, size, filler: c, valid }): Req => {
          // either malformed JSON or a well-formed object; both over the limit in bytes
          const text = valid
            ? `{"description":"${'d'.repeat(size)}"}`
            : c.repeat(Math.ceil(size / Buffer.byteLength(c)) + 1)
          return jsonRequest(route, text, urlOf(route))
        })
      await fc.assert(
        fc.asyncProperty(req, async (r) => {
          const res = await send(r)
          checkAnswer(r, res)
          // a payer's browser is answered with a page, an API client with the envelope
          if (r.url.startsWith('/v2/hosted/')) {
            if (res.statusCode !== 413 || !String(res.headers['content-type']).startsWith('text/html')) {
              fail(r, res, 'want a 413 page')
            }
          } else if (res.statusCode !== 413 || checkEnvelope(r, res).code !== 'body_too_large') {
            fail(r, res, 'want 413 body_too_large')
          }
        }),
        params(60),
      )
    },
    TIMEOUT,
  )

  it('the limit is in bytes: exactly 64 KiB is parsed, one byte more is 413', async () => {
    const route = ROUTES.find((r) => r.path === '/v2/customers/' && r.method === 'POST') as Route
    const wrap = (n: number) => {
      const head = '{"email":"a@b.co","description":"'
      const tail = '"}'
      const room = n - head.length - tail.length
      return `${head}${'é'.repeat(Math.floor(room / 2))}${'e'.repeat(room % 2)}${tail}`
    }
    const at = jsonRequest(route, wrap(LIMIT))
    expect(Buffer.byteLength(at.payload as string)).toBe(LIMIT)
    const atRes = await send(at)
    checkAnswer(at, atRes)
    expect(atRes.statusCode).toBe(422) // description is over 255 characters: parsed, then refused
    const over = jsonRequest(route, `${wrap(LIMIT)}  `)
    const overRes = await send(over)
    checkAnswer(over, overRes)
    expect(overRes.statusCode).toBe(413)
  })

  it('a streamed body (no Content-Length) over the limit is 413 too', async () => {
    const { Readable } = await import('node:stream')
    const route = ROUTES.find((r) => r.path === '/v2/sources/') as Route
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(4096, 'x'))
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/sources/',
      headers: headersFor(f.keys.pkTest, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }),
      payload: Readable.from(chunks),
    })
    const r: Req = { method: 'POST', url: route.path, headers: {}, payload: '<stream of 160 KiB>' }
    checkAnswer(r, res)
    expect(res.statusCode).toBe(413)
  })

  it(
    '10 000 levels of nesting do not crash: 400, 413 or 422',
    async () => {
      const D = 10_000
      const shapes: Record<string, string> = {
        'open arrays': '['.repeat(D),
        'closed arrays': `${'['.repeat(D)}${']'.repeat(D)}`,
        'open objects': '{"a":'.repeat(D),
        'closed objects': `${'{"a":'.repeat(D)}1${'}'.repeat(D)}`,
        metadata: `{"email":"a@b.co","description":"x","metadata":${'{"m":'.repeat(D)}1${'}'.repeat(D)}}`,
        owner: `{"type":"card","owner":${'{"billing":'.repeat(D)}{}${'}'.repeat(D)}}`,
        'arrays in a field': `{"amount":${'['.repeat(D)}1${']'.repeat(D)},"currency":"usd","source":"src_x"}`,
        'mixed, closed': `${'[{"a":'.repeat(D / 2)}0${'}]'.repeat(D / 2)}`,
        'nested strings': `${'["'.repeat(D)}`,
      }
      const cases = fc.record({
        shape: fc.constantFrom(...Object.keys(shapes)),
        route: fc.constantFrom(...BODY_ROUTES),
      })
      await fc.assert(
        fc.asyncProperty(cases, async ({ shape, route }) => {
          const r = jsonRequest(route, shapes[shape] as string, urlOf(route))
          const res = await send(r)
          checkAnswer(r, res)
          const hosted = route.path.startsWith('/v2/hosted/')
          const allowed = hosted ? [400, 404, 413, 422] : [400, 413, 422]
          if (!allowed.includes(res.statusCode) && !knownBug(r, res))
            fail(r, res, `nesting (${shape}): want one of ${allowed}`)
        }),
        { ...params(80), examples: Object.keys(shapes).map((shape) => [{ shape, route: BODY_ROUTES[0] as Route }]) },
      )
    },
    TIMEOUT,
  )

  it(
    'a 60 KiB body with thousands of keys is 422, not 5xx',
    async () => {
      const keysOf = (n: number, prefix: string) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i % 3 === 0 ? `v${i}` : i]))
      const bodies = (route: Route, n: number): Record<string, unknown>[] => {
        const valid: Record<string, Record<string, unknown>> = {
          '/v2/sources/': { type: 'card', card: TEST_CARD },
          '/v2/customers/': { email: 'a@b.co', description: 'x' },
          '/v2/charges/': { amount: 100, currency: 'usd', source: f.src[0] as string },
        }
        const base = valid[route.path] ?? {}
        return [
          { ...base, ...keysOf(n, 'k') }, // thousands of unknown fields
          { ...base, metadata: keysOf(n, 'm') }, // thousands of metadata keys (at most 50)
          { ...base, owner: { billing: { name: 'A', ...keysOf(n, 'b') } } },
        ]
      }
      const cases = fc.record({
        route: fc.constantFrom(...BODY_ROUTES.filter((r) => !r.path.startsWith('/v2/hosted/'))),
        which: fc.integer({ min: 0, max: 2 }),
        n: fc.integer({ min: 2000, max: 5000 }),
      })
      await fc.assert(
        fc.asyncProperty(cases, async ({ route, which, n }) => {
          // as many keys as fit into about 60 KiB
          let keys = n
          let body = bodies(route, keys)[which] as Record<string, unknown>
          while (toText(body).length > 61_440) {
            keys = Math.floor(keys * 0.9)
            body = bodies(route, keys)[which] as Record<string, unknown>
          }
          const r = jsonRequest(route, toText(body), urlOf(route))
          const res = await send(r)
          checkAnswer(r, res)
          if (res.statusCode !== 422 && !knownBug(r, res)) fail(r, res, `want 422 for ${keys} keys`)
        }),
        params(30),
      )
    },
    TIMEOUT,
  )
})
