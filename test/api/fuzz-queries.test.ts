import fc from 'fast-check'
import { describe, it } from 'vitest'
import { headersFor, keyArb, queryParam, urlArb } from '../helpers/fuzz-requests.js'
import { LIST_ROUTES, ROUTES } from '../helpers/fuzz-routes.js'
import { checkAnswer, f, params, type Req, send, TIMEOUT, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing query strings (see fuzz-harness.ts for the properties and the environment): limit,
 * start_after, repeated and unknown parameters on every list and retrieve, and on the hosted page.
 */

useFuzzApp()

describe('fuzz: every endpoint answers below 500 in the one envelope', () => {
  it(
    'random query strings: limit, start_after, repeated and unknown parameters',
    async () => {
      const param = queryParam(f)
      const routes = [...LIST_ROUTES, ...ROUTES.filter((r) => r.method === 'GET' && r.path.includes(':'))]
      const req = fc
        .tuple(fc.constantFrom(...routes), fc.array(param, { maxLength: 5 }), fc.constantFrom('?', '??', '?&', '&'))
        .chain(([route, ps, sep]) =>
          fc
            .record({ url: urlArb(f, route), key: keyArb(f, route) })
            .map(
              ({ url, key }): Req => ({ method: 'GET', url: `${url}${sep}${ps.join('&')}`, headers: headersFor(key) }),
            ),
        )
      const hostedReq = fc.tuple(fc.constantFrom(...f.hosted), fc.array(param, { maxLength: 4 }), fc.boolean()).map(
        ([h, ps, withToken]): Req => ({
          method: 'GET',
          url: `/v2/hosted/charges/${h.ch}?${withToken ? `token=${h.token}&` : ''}${ps.join('&')}`,
          headers: {},
        }),
      )
      await fc.assert(
        fc.asyncProperty(fc.oneof({ weight: 4, arbitrary: req }, { weight: 1, arbitrary: hostedReq }), async (r) =>
          checkAnswer(r, await send(r)),
        ),
        params(300),
      )
    },
    TIMEOUT,
  )
})
