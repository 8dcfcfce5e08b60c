import http from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { headerText } from '../helpers/fuzz-headers.js'
import { headersFor, keyArb, queryParam, sometimes, urlArb } from '../helpers/fuzz-requests.js'
import { LIST_ROUTES, ROUTES, type Route } from '../helpers/fuzz-routes.js'
import { checkAnswer, f, fail, params, type Req, type Res, send, TIMEOUT, t, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing query strings (see fuzz-harness.ts for the properties and the environment): limit,
 * start_after, repeated and unknown parameters on every list and retrieve, and on the hosted page;
 * and the event stream's query and Last-Event-ID, over a socket.
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

// ---------------------------------------------------------------------------------------------
// GET /v2/events/stream: not in ROUTES, since the answer to a good request never ends
// ---------------------------------------------------------------------------------------------

/** One request over a socket: a stream's answer is its head, and the connection is then closed. */
function overSocket(port: number, r: Req): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: r.url, method: r.method, headers: r.headers }, (res) => {
      const answer = (body: string) => ({ statusCode: res.statusCode, headers: res.headers, body }) as unknown as Res
      if (res.statusCode === 200) {
        resolve(answer(''))
        req.destroy()
        return
      }
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve(answer(Buffer.concat(chunks).toString('utf8'))))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('fuzz: the event stream answers bad queries and headers below 500 in the one envelope', () => {
  let port = 0
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as AddressInfo).port
  })

  it(
    'random query strings and Last-Event-ID values: a parameter or a malformed id is refused, never a 5xx',
    async () => {
      const route: Route = { method: 'GET', path: '/v2/events/stream', auth: 'secret' }
      const lastEventId = fc.oneof(
        fc.constantFrom(...f.evt),
        fc.constantFrom(...f.evt).map((id) => `${id}0`),
        fc.constantFrom(...f.evt).map((id) => id.toUpperCase()),
        fc.constantFrom('', 'evt_', `evt_${'0'.repeat(31)}`, `evt_${'g'.repeat(32)}`, `ch_${'0'.repeat(32)}`, ' '),
        headerText(0, 60),
      )
      const req = fc
        .record({
          ps: fc.array(queryParam(f), { maxLength: 3 }),
          sep: fc.constantFrom('?', '??', '?&'),
          key: keyArb(f, route),
          lastEventId: sometimes(lastEventId, 0.6),
        })
        .map(
          ({ ps, sep, key, lastEventId: id }): Req => ({
            method: 'GET',
            url: ps.length > 0 ? `${route.path}${sep}${ps.join('&')}` : route.path,
            headers: headersFor(key, id === undefined ? {} : { 'last-event-id': id }),
          }),
        )
      await fc.assert(
        fc.asyncProperty(req, async (r) => {
          const res = await overSocket(port, r)
          checkAnswer(r, res)
          const id = r.headers['last-event-id']
          if (res.statusCode === 200) {
            expect(String(res.headers['content-type'])).toMatch(/^text\/event-stream/)
            if (r.url.includes('=')) fail(r, res, 'a stream opened with a query parameter')
            if (id !== undefined && !/^evt_[0-9a-f]{32}$/.test(id))
              fail(r, res, 'a stream resumed after a malformed id')
          }
        }),
        params(100),
      )
    },
    TIMEOUT,
  )
})
