import http from 'node:http'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fillPath, headersFor, idArb, keyArb, oddSegment, urlArb } from '../helpers/fuzz-requests.js'
import { type IdKind, NOT_FUZZED, ROUTES } from '../helpers/fuzz-routes.js'
import { checkAnswer, f, params, type Req, send, TIMEOUT, t, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing paths and methods (see fuzz-harness.ts for the properties and the environment): odd
 * ids and slashes in every path, and every method but the route's own, answer below 500 in the
 * one envelope.
 */

useFuzzApp()

/** `METHOD /path` of each route the app registers, read from its route tree; `:` for each parameter. */
function registeredRoutes(): string[] {
  const out: string[] = []
  const prefixes: string[] = []
  for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    // `│   └── /:dlv_id (GET, HEAD)`: four characters a level, the segment, its methods
    const m = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!m) continue
    prefixes.length = (m[1] as string).length / 4
    prefixes.push(m[2] as string)
    for (const method of m[3]?.split(', ') ?? []) out.push(`${method} ${prefixes.join('')}`)
  }
  return out
}

const routeKey = (method: string, path: string) => `${method} ${path.replace(/:\w+/g, ':').replace(/(.)\/$/, '$1')}`

describe('the routes the fuzz tests send requests to', () => {
  it('are every route the app registers, but its pages and the event stream', () => {
    const registered = registeredRoutes()
    const gets = new Set(registered.filter((r) => r.startsWith('GET ')).map((r) => r.slice(4)))
    const api = registered.filter(
      (r) =>
        // the HEAD every GET answers, the API's documentation and the dashboard's page and files
        !(r.startsWith('HEAD ') && gets.has(r.slice(5))) &&
        !/^GET (\/v2\/docs|\/dashboard)(\/|\*|$)/.test(r) &&
        r !== 'GET /v2/openapi.json',
    )
    const fuzzed = [...ROUTES, ...NOT_FUZZED].map((r) => routeKey(r.method, r.path))
    expect(new Set(fuzzed).size).toBe(fuzzed.length)
    expect(new Set(api.map((r) => routeKey(...(r.split(' ') as [string, string]))))).toEqual(new Set(fuzzed))
  })
})

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
