import http from 'node:http'
import fc from 'fast-check'
import { describe, it } from 'vitest'
import { fillPath, headersFor, idArb, keyArb, oddSegment, urlArb } from '../helpers/fuzz-requests.js'
import { type IdKind, ROUTES } from '../helpers/fuzz-routes.js'
import { checkAnswer, f, params, type Req, send, TIMEOUT, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing paths and methods (see fuzz-harness.ts for the properties and the environment): odd
 * ids and slashes in every path, and every method but the route's own, answer below 500 in the
 * one envelope.
 */

useFuzzApp()

describe('fuzz: every endpoint answers below 500 in the one envelope', () => {
  it(
    'random path ids: unicode, percent-encoding, very long, .., encoded NUL, odd slashes',
    async () => {
      const req = fc.constantFrom(...ROUTES.filter((r) => r.path.includes(':'))).chain((route) => {
        const kinds = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1] as IdKind)
        const ids = Object.fromEntries(
          kinds.map((k) => [k, fc.oneof({ weight: 1, arbitrary: idArb(f, k) }, { weight: 3, arbitrary: oddSegment })]),
        )
        const slashes = fc.constantFrom('as is', 'trailing', 'doubled', 'no trailing')
        const reshape = (url: string, how: string) =>
          how === 'trailing'
            ? `${url}/`
            : how === 'doubled'
              ? url.replace(/\//g, '//')
              : how === 'no trailing'
                ? url.replace(/\/$/, '')
                : url
        return fc.record({ ids: fc.record(ids), key: keyArb(f, route), slash: slashes }).map(
          ({ ids: chosen, key, slash }): Req => ({
            method: route.method,
            url: reshape(fillPath(route.path, chosen), slash),
            headers: headersFor(key, route.body ? { 'content-type': 'application/json' } : {}),
            ...(route.body ? { payload: '{}' } : {}),
          }),
        )
      })
      await fc.assert(
        fc.asyncProperty(req, async (r) => checkAnswer(r, await send(r))),
        params(400),
      )
    },
    TIMEOUT,
  )

  it(
    'wrong and unusual methods on every path',
    async () => {
      // CONNECT is not a request a server routes (it opens a tunnel); every other method may arrive
      const methods = http.METHODS.filter((m) => m !== 'CONNECT')
      const req = fc.constantFrom(...ROUTES).chain((route) =>
        fc
          .record({
            method: fc.constantFrom(...methods.filter((m) => m !== route.method)),
            url: urlArb(f, route),
            key: keyArb(f, route),
            body: fc.option(fc.constantFrom('{}', '{"a":1}', '[', ''), { nil: undefined }),
            contentType: fc.option(fc.constantFrom('application/json', 'text/plain'), { nil: undefined }),
          })
          .map(
            ({ method, url, key, body, contentType }): Req => ({
              method,
              url,
              headers: headersFor(key, contentType ? { 'content-type': contentType } : {}),
              ...(body !== undefined ? { payload: body } : {}),
            }),
          ),
      )
      await fc.assert(
        fc.asyncProperty(req, async (r) => checkAnswer(r, await send(r))),
        params(300),
      )
    },
    TIMEOUT,
  )
})
