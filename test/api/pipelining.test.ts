import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type TestApp, testApp } from '../helpers/app.js'

/**
 * A request the HTTP parser read whole is answered, even when bytes that are not HTTP follow it
 * on the connection: its work is done, and the client must learn its outcome, not only that the
 * bytes after it were refused.
 */

let t: TestApp
let port = 0
beforeAll(async () => {
  t = await testApp()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as net.AddressInfo).port
})
afterAll(() => t.close())

interface Answer {
  status: number
  body: string
}

/** Sends raw bytes and reads every answer until the service closes the connection. */
function exchange(bytes: string): Promise<Answer[]> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes))
    const timer = setTimeout(() => socket.destroy(), 10_000)
    socket.on('data', (d) => chunks.push(d))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      const answers: Answer[] = []
      let raw = Buffer.concat(chunks).toString('utf8')
      while (raw.startsWith('HTTP/1.1 ')) {
        const split = raw.indexOf('\r\n\r\n')
        const head = raw.slice(0, split)
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        answers.push({ status: Number(head.split(' ')[1]), body: raw.slice(split + 4, split + 4 + length) })
        raw = raw.slice(split + 4 + length)
      }
      resolve(answers)
    })
  })
}

const auth = () => `Authorization: Bearer ${t.account.sk_test_key}\r\n`

describe('a request followed by bytes that are not HTTP', () => {
  it('a refund sent without Content-Length is answered as the refund it was, then the rest refused', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const paid = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    expect(paid.body.status).toBe('succeeded')
    // no Content-Length: the request has no body (a full refund), and its JSON is a second request
    const answers = await exchange(
      `POST /v2/charges/${paid.body.id}/refund HTTP/1.1\r\nHost: localhost\r\n${auth()}` +
        `Content-Type: application/json\r\n\r\n{"amount":100}`,
    )
    expect(answers.map((a) => a.status)).toEqual([200, 400])
    expect(JSON.parse(answers[0]?.body ?? '{}')).toMatchObject({ id: paid.body.id, amount_refunded: 1000 })
    expect(JSON.parse(answers[1]?.body ?? '{}').error.code).toBe('request_invalid')
  })

  it('a new charge with a stray byte after its body is answered 201 before the byte is refused', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const body = JSON.stringify({ amount: 779, currency: 'usd', source: src.body.id })
    const answers = await exchange(
      `POST /v2/charges/ HTTP/1.1\r\nHost: localhost\r\n${auth()}Content-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}x`,
    )
    expect(answers.map((a) => a.status)).toEqual([201, 400])
    const charge = JSON.parse(answers[0]?.body ?? '{}')
    expect(charge).toMatchObject({ object: 'charge', amount: 779, status: 'succeeded' })
    expect((await t.sk.get(`/v2/charges/${charge.id}`)).body.status).toBe('succeeded')
  })

  it('an Expect the server cannot meet, after a request under way, is answered after it', async () => {
    const answers = await exchange(
      `GET /v2/me HTTP/1.1\r\nHost: localhost\r\n${auth()}\r\n` +
        `GET /v2/me HTTP/1.1\r\nHost: localhost\r\n${auth()}Expect: teapot\r\n\r\n`,
    )
    expect(answers.map((a) => a.status)).toEqual([200, 417])
    // the service is still up
    expect((await t.sk.get('/v2/me')).status).toBe(200)
  })

  it('a CONNECT after a charge still with its processor is answered after the charge', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const body = JSON.stringify({ amount: 800, currency: 'usd', source: src.body.id })
    const answers = await exchange(
      `POST /v2/charges/ HTTP/1.1\r\nHost: localhost\r\n${auth()}Content-Type: application/json\r\n` +
        `Jackdaw-Test-Fault: processor_latency=300\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    )
    expect(answers.map((a) => a.status)).toEqual([201, 400])
    expect(JSON.parse(answers[0]?.body ?? '{}')).toMatchObject({ amount: 800, status: 'succeeded' })
  })

  it('a request after a refused one on its connection never runs', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const later = await t.sk.post('/v2/sources/', cardSource())
    const charge = (source: string, amount: number, extra = '') => {
      const body = JSON.stringify({ amount, currency: 'usd', source })
      return (
        `POST /v2/charges/ HTTP/1.1\r\nHost: localhost\r\n${auth()}Content-Type: application/json\r\n${extra}` +
        `Content-Length: ${body.length}\r\n\r\n${body}`
      )
    }
    const answers = await exchange(
      charge(src.body.id, 701, 'Jackdaw-Test-Fault: processor_latency=300\r\n') +
        `GET /v2/me HTTP/1.1\r\nHost: localhost\r\n${auth()}Expect: teapot\r\n\r\n` +
        charge(later.body.id, 703),
    )
    expect(answers.map((a) => a.status)).toEqual([201, 417])
    // the third was never answered, and never made: its source is still unused
    expect((await t.sk.get(`/v2/sources/${later.body.id}`)).body.used).toBe(false)
  })

  it('a client that resets its connection while a CONNECT waits for the request before it leaves the service up', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const body = JSON.stringify({ amount: 900, currency: 'usd', source: src.body.id })
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(
        `POST /v2/charges/ HTTP/1.1\r\nHost: localhost\r\n${auth()}Content-Type: application/json\r\n` +
          `Jackdaw-Test-Fault: processor_latency=400\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
          'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      ),
    )
    socket.on('error', () => {})
    await new Promise((r) => setTimeout(r, 100))
    socket.resetAndDestroy()
    await new Promise((r) => setTimeout(r, 700))
    expect((await t.sk.get('/v2/me')).status).toBe(200)
  })
})
