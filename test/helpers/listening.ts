import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AppDeps } from '../../src/app.js'
import { type AppExtras, type TestApp, testApp } from './app.js'

/** A test app listening on a free port of 127.0.0.1, as a client or a browser reaches it. */
export interface ListeningApp extends TestApp {
  url: string
}

export async function listeningApp(options: AppDeps['options'] = {}, extras: AppExtras = {}): Promise<ListeningApp> {
  const t = await testApp(options, extras)
  const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  return { ...t, url }
}

export interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/**
 * A local HTTP server that records every request and answers it with `status(request)` (200
 * when absent): a shop's return page or notify receiver.
 */
export async function recorder(status: (r: Received) => number = () => 200) {
  const received: Received[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (d) => {
      body += d
    })
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      received.push(r)
      res.writeHead(status(r), { 'content-type': 'text/html' }).end('<h1>recorded</h1>')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    received,
    /** resolves with the first request that `match` accepts, waiting up to `timeoutMs` */
    async waitFor(match: (r: Received) => boolean, timeoutMs = 10_000): Promise<Received> {
      const started = Date.now()
      for (;;) {
        const found = received.find(match)
        if (found) return found
        if (Date.now() - started > timeoutMs) throw new Error(`no matching request in ${timeoutMs} ms`)
        await new Promise((r) => setTimeout(r, 25))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
