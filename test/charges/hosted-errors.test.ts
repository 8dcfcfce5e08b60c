import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Reply, type TestApp, testApp } from '../helpers/app.js'

/**
 * A payer's browser gets a page from the hosted pages' addresses, never the API's JSON, and the
 * page's headers keep its token from leaking: also for what the router, the URL decoder and Node's
 * HTTP server refuse before any route runs.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const PAGE = `/v2/hosted/charges/ch_${'0'.repeat(32)}`

function expectPage(res: { status: number; headers: Record<string, unknown>; text: string }, status: number) {
  expect(res.status, res.text).toBe(status)
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
  expect(res.text).toMatch(/^<!doctype html>/)
  expect(res.headers['referrer-policy']).toBe('no-referrer')
  expect(res.headers['content-security-policy']).toContain("default-src 'none'")
  expect(res.headers['request-id']).toMatch(/^req_/)
}

async function raw(method: string, url: string): Promise<Reply> {
  const res = await t.app.inject({ method: method as 'GET', url })
  return { status: res.statusCode, headers: res.headers, text: res.body, body: undefined } as Reply
}

describe('hosted pages: errors before routing are pages too', () => {
  it('a method the page does not take is a 405 page naming the ones it does', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const res = await raw(method, `${PAGE}?token=secret`)
      expectPage(res, 405)
      expect(res.headers.allow).toBe('GET, HEAD, POST')
      expect(res.text).not.toContain('secret')
    }
  })

  it('an address that does not decode is a 400 page', async () => {
    expectPage(await raw('GET', '/v2/hosted/charges/%zz?token=secret'), 400)
  })

  it('an id too long for any charge is the not-found page', async () => {
    const res = await raw('GET', `/v2/hosted/charges/${'a'.repeat(301)}?token=x`)
    expectPage(res, 404)
    expect(res.text).toContain('Payment not found')
  })

  it('an Expect the server cannot meet is a 417 page', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as net.AddressInfo
    const text = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = []
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.end(`GET ${PAGE}?token=x HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\n\r\n`),
      )
      socket.on('data', (d) => chunks.push(d))
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
    })
    const [head = '', body = ''] = text.split('\r\n\r\n')
    const headers = Object.fromEntries(
      head
        .split('\r\n')
        .slice(1)
        .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    )
    expectPage({ status: Number(head.split(' ')[1]), headers, text: body }, 417)
  })
})

describe('the API reference', () => {
  it('a file it does not have is a 404, not a method refused', async () => {
    const res = await raw('GET', '/v2/docs/static/nope.js')
    expect(res.status, res.text).toBe(404)
    expect(JSON.parse(res.text).error.code).toBe('route_missing')
  })
})
