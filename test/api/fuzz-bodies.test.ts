import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Source } from '../../src/schemas/source.js'
import { bodyText, headersFor, keyArb, urlArb } from '../helpers/fuzz-requests.js'
import { BODY_ROUTES, type Fixtures, ROUTES } from '../helpers/fuzz-routes.js'
import { validSourceBody } from '../helpers/fuzz-valid-bodies.js'
import { toText } from '../helpers/fuzz-values.js'
import { shapeProblems } from '../helpers/shape.js'
import { checkAnswer, f, fail, params, type Req, send, TIMEOUT, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing request bodies (see fuzz-harness.ts for the properties and the environment):
 * random, malformed and mutated bodies on every endpoint answer below 500 in the one envelope,
 * and every valid create-source body is accepted without the card number or cvc in the answer.
 */

useFuzzApp()

// ---------------------------------------------------------------------------------------------
// 1. Every endpoint: below 500, the one envelope, a Request-Id
// ---------------------------------------------------------------------------------------------

describe('fuzz: every endpoint answers below 500 in the one envelope', () => {
  it(
    'random, malformed and mutated JSON bodies, on every endpoint',
    async () => {
      const route = fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...BODY_ROUTES) },
        { weight: 1, arbitrary: fc.constantFrom(...ROUTES) },
      )
      const req = route.chain((route) =>
        fc
          .record({
            url: urlArb(f, route),
            key: keyArb(f, route),
            body: bodyText(f, route),
            form: fc.boolean(),
          })
          .map(({ url, key, body, form }): Req => {
            // the hosted page is a browser form; it takes JSON too
            if (route.path.startsWith('/v2/hosted/') && form) {
              const parsed = (() => {
                try {
                  return JSON.parse(body) as Record<string, unknown>
                } catch {
                  return { decision: body }
                }
              })()
              const hosted = f.hosted.find((h) => url.endsWith(h.ch))
              const fields = { token: hosted?.token ?? '', ...(typeof parsed === 'object' ? parsed : {}) }
              return {
                method: route.method,
                url,
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                payload: new URLSearchParams(
                  Object.entries(fields ?? {}).map(([k, v]): [string, string] => [
                    k,
                    typeof v === 'string' ? v : toText(v),
                  ]),
                ).toString(),
              }
            }
            return {
              method: route.method,
              url,
              headers: headersFor(key, { 'content-type': 'application/json' }),
              payload: body,
            }
          }),
      )
      await fc.assert(
        fc.asyncProperty(req, async (r) => checkAnswer(r, await send(r))),
        params(400),
      )
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------------------------------------
// 4. Valid create-source bodies
// ---------------------------------------------------------------------------------------------

interface SourceAnswer {
  id: string
  object: string
  type: string
  used: boolean
  livemode: boolean
  card?: Record<string, unknown> & { last4: string }
}

function keysDeep(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) keysDeep(x, out)
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push(k)
      keysDeep(x, out)
    }
  }
  return out
}

describe('fuzz: valid create-source bodies', () => {
  it(
    'a valid body always gets 200, and the answer never holds the card number or the cvc',
    async () => {
      // live mode resolves notify hosts in DNS; notify is exercised with test keys only
      const req = fc
        .tuple(
          fc.boolean(),
          fc.constantFrom('skTest', 'pkTest', 'skLive', 'pkLive') as fc.Arbitrary<keyof Fixtures['keys']>,
        )
        .chain(([withNotify, key]) =>
          validSourceBody(withNotify && key.endsWith('Test'), key.endsWith('Live')).map((body) => ({ body, key })),
        )
      await fc.assert(
        fc.asyncProperty(req, async ({ body, key }) => {
          const r: Req = {
            method: 'POST',
            url: '/v2/sources/',
            headers: headersFor(f.keys[key], { 'content-type': 'application/json' }),
            payload: JSON.stringify(body),
          }
          const res = await send(r)
          checkAnswer(r, res)
          if (res.statusCode !== 200) fail(r, res, 'a valid create-source body was refused')
          const source = JSON.parse(res.body) as SourceAnswer
          const card = (body as { card?: { number: string; cvc: string } }).card
          expect(source.object).toBe('source')
          expect(source.type).toBe((body as { type: string }).type)
          expect(source.used).toBe(false)
          expect(source.livemode).toBe(key.endsWith('Live'))
          const fetched = await send({ method: 'GET', url: `/v2/sources/${source.id}`, headers: r.headers })
          const answers: [string, SourceAnswer][] = [
            [res.body, source],
            [fetched.body, JSON.parse(fetched.body) as SourceAnswer],
          ]
          for (const [text, view] of answers) {
            const problems = shapeProblems(Source, view)
            if (problems.length > 0) fail(r, res, `not a Source: ${problems.join('; ')}`)
            const keys = keysDeep(view)
            if (keys.includes('number') || keys.includes('cvc')) fail(r, res, 'the answer has a number or cvc field')
            if (card) {
              if (text.includes(card.number)) fail(r, res, 'the answer holds the card number')
              expect(view.card?.last4).toBe(card.number.slice(-4))
            } else {
              expect(view.card).toBeUndefined()
            }
          }
        }),
        params(250),
      )
    },
    TIMEOUT,
  )
})
