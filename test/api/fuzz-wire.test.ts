import net from 'node:net'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { basic } from '../helpers/app.js'
import { wireCorruption } from '../helpers/fuzz-headers.js'
import { authorization, keyOf } from '../helpers/fuzz-requests.js'
import { ROUTES } from '../helpers/fuzz-routes.js'
import { checkAnswer, f, knownBug, params, type Req, type Res, TIMEOUT, t, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing what only a real socket can send (see fuzz-harness.ts for the properties and the
 * environment): bytes an HTTP parser refuses still get the envelope and a Request-Id.
 */

useFuzzApp()

// ---------------------------------------------------------------------------------------------
// 1, on the wire: what only a real socket can send (bytes an HTTP parser refuses)
// ---------------------------------------------------------------------------------------------

interface WireAnswer {
  status: number
  headers: Record<string, string>
  body: string
  raw: string
}

/** One request over a real socket; the answer parsed (Connection: close, so it is the last). */
function overTheWire(port: number, bytes: Buffer): Promise<WireAnswer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes))
    const timer = setTimeout(() => socket.destroy(), 5_000)
    socket.on('data', (d) => chunks.push(d))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      const raw = Buffer.concat(chunks).toString('latin1')
      if (raw === '') return resolve(undefined)
      const split = raw.indexOf('\r\n\r\n')
      const head = (split < 0 ? raw : raw.slice(0, split)).split('\r\n')
      const status = Number((head[0] ?? '').split(' ')[1])
      const headers: Record<string, string> = {}
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':')
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const rest = split < 0 ? '' : raw.slice(split + 4)
      const length = headers['content-length'] !== undefined ? Number(headers['content-length']) : rest.length
      resolve({ status, headers, raw, body: Buffer.from(rest, 'latin1').subarray(0, length).toString('utf8') })
    })
  })
}

describe('fuzz: malformed HTTP on the wire', () => {
  let port = 0
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as net.AddressInfo).port
  })

  it(
    'a request the HTTP parser refuses still gets the envelope and a Request-Id, never a 5xx',
    async () => {
      const req = fc.record({
        route: fc.constantFrom(...ROUTES.filter((r) => !r.path.includes(':'))),
        corruption: wireCorruption,
      })
      await fc.assert(
        fc.asyncProperty(req, async ({ route, corruption: c }) => {
          const eol = 'eol' in c ? (c.eol as string) : '\r\n'
          const body = route.method === 'GET' ? '' : '{}'
          const key = keyOf(f, route)
          const lines = [
            `${'method' in c ? c.method : route.method} ${'target' in c ? c.target : route.path} ${'version' in c ? c.version : 'HTTP/1.1'}`,
            'Host: localhost',
            'Connection: close',
            ...(c.kind === 'authorization' || !key ? [] : [`Authorization: ${authorization(key)}`]),
            'Content-Type: application/json',
            `Content-Length: ${body.length}`,
            ...('header' in c ? [c.header as string] : []),
          ]
          const text = `${lines.join(eol)}${eol}${eol}${body}`
          const r: Req = { method: 'RAW', url: route.path, headers: {}, payload: text.slice(0, 400) }
          const answer = await overTheWire(port, Buffer.from(text, 'latin1'))
          if (!answer) return // the connection was closed without an answer
          const res = {
            statusCode: answer.status,
            headers: answer.headers,
            body: answer.body,
          } as unknown as Res
          if (knownBug(r, res)) return
          checkAnswer(r, res)
        }),
        params(80),
      )
    },
    TIMEOUT,
  )

  it('found by fuzzing: a header line without a colon gets the envelope and a Request-Id', async () => {
    const text = `GET /v2/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nGarbage\r\n\r\n`
    const answer = await overTheWire(port, Buffer.from(text, 'latin1'))
    expect(answer).toBeDefined()
    const res = { statusCode: answer?.status, headers: answer?.headers, body: answer?.body } as unknown as Res
    checkAnswer({ method: 'RAW', url: '/v2/me', headers: {}, payload: text }, res, true)
  })

  it('what Node would answer itself, with an empty body or none, gets the envelope and a Request-Id', async () => {
    const key = basic(t.account.sk_test_key)
    const cases: [string, number, string][] = [
      [`GET /v2/me HTTP/1.1\r\nAuthorization: ${key}\r\nConnection: close\r\n\r\n`, 400, 'request_invalid'],
      [
        `GET /v2/me HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\nConnection: close\r\n\r\n`,
        417,
        'expectation_failed',
      ],
      [`CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`, 400, 'request_invalid'],
    ]
    for (const [text, status, code] of cases) {
      const answer = await overTheWire(port, Buffer.from(text, 'latin1'))
      expect(answer?.status, text).toBe(status)
      expect(JSON.parse(answer?.body ?? '{}').error?.code, text).toBe(code)
      expect(answer?.headers['request-id'], text).toMatch(/^req_/)
    }
    // HTTP/1.0 needs no Host: the request goes on to routing
    const old = await overTheWire(port, Buffer.from('GET /nothing HTTP/1.0\r\n\r\n', 'latin1'))
    expect(old?.status).toBe(404)
    expect(JSON.parse(old?.body ?? '{}').error?.code).toBe('route_missing')
  })
})
