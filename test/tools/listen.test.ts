import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { verifySignature } from '../../src/notify/signature.js'
import { cardSource } from '../helpers/app.js'
import { type ListeningApp, listeningApp, recorder } from '../helpers/listening.js'
import { runToEnd, runTs } from '../helpers/process.js'

/**
 * `jackdaw listen` as a process against a running service and a local receiver: it prints the
 * signing secret, forwards each event of the chosen types signed as a notify call, prints a line
 * per event with the receiver's answer, and resumes after a dropped connection missing nothing.
 */

let t: ListeningApp
let receiver: Awaited<ReturnType<typeof recorder>>
beforeAll(async () => {
  t = await listeningApp({}, { eventStream: { pollMs: 50 } })
  receiver = await recorder((r) => (r.url === '/teapot' ? 418 : 200))
})
afterAll(async () => {
  await t.close()
  await receiver.close()
})

/** A proxy to the service by which the event stream's request takes `delayMs` to reach it, as from some way off. */
async function distant(target: string, delayMs: number) {
  const to = new URL(target)
  const proxy = http.createServer((req, res) => {
    setTimeout(
      () => {
        const upstream = http.request(
          { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
          },
        )
        upstream.on('error', () => res.destroy())
        req.pipe(upstream)
      },
      req.url?.startsWith('/v2/events/stream') ? delayMs : 0,
    )
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections()
        proxy.close(() => resolve())
      }),
  }
}

/** a notify address that never answers: the calls stay queued, each with the body it would carry */
const NOTIFY = { success: 'https://shop.example/ok', fail: 'https://shop.example/fail', notify: 'http://127.0.0.1:9/x' }

async function charge(amount: number, capture = true): Promise<string> {
  const src = await t.sk.post('/v2/sources/', { ...cardSource(), redirect: NOTIFY })
  const ch = await t.sk.post('/v2/charges/', { amount, currency: 'usd', source: src.body.id, capture })
  expect(ch.status).toBe(201)
  return ch.body.id
}

describe('jackdaw listen', () => {
  it('forwards the chosen events signed as notify calls, a line each, and resumes after a drop', async () => {
    const listener = runTs(
      ['src/cli.ts', 'listen', '--forward-to', `${receiver.url}/hooks`, '--events', 'charge.succeeded,charge.refunded'],
      { JACKDAW_API_URL: t.url, JACKDAW_API_KEY: t.account.sk_test_key },
    )
    try {
      const [, secret] = await listener.waitFor(/Signing secret: (whsec_\S+)/)
      await listener.waitFor(/Ready/)
      expect(secret).toBe((await t.sk.get('/v2/me')).body.webhook_secret)

      const paid = await charge(1000)
      await t.sk.post(`/v2/charges/${paid}/refund`, { amount: 300 })
      // not chosen: an authorization without capture is charge.succeeded, its void charge.voided
      const held = await charge(2000, false)
      await t.sk.post(`/v2/charges/${held}/void`)
      await receiver.waitFor(() => receiver.received.length >= 3)

      // the stream's connection drops; what happens meanwhile comes once it is back
      t.app.server.closeAllConnections()
      const during = await charge(3000)
      await listener.waitFor(/connection lost/)
      await receiver.waitFor((r) => r.body.includes(during))

      const expected = [
        [paid, 'charge.succeeded'],
        [paid, 'charge.refunded'],
        [held, 'charge.succeeded'],
        [during, 'charge.succeeded'],
      ]
      expect(receiver.received.map((r) => [JSON.parse(r.body).data.object.id, JSON.parse(r.body).type])).toEqual(
        expected,
      )
      for (const r of receiver.received) {
        expect(r.method).toBe('POST')
        expect(r.url).toBe('/hooks')
        expect(r.headers['content-type']).toBe('application/json')
        expect(verifySignature(r.body, r.headers['jackdaw-signature'], secret as string)).toBe(true)
        // the body is the one the event's own notify call carries
        const event = JSON.parse(r.body)
        const queued = await t.db.query<{ payload: string }>('SELECT payload FROM deliveries WHERE event_id = $1', [
          event.id,
        ])
        expect(queued.rows[0]?.payload).toBe(r.body)
        expect(listener.output()).toMatch(new RegExp(`${event.type}\\s+${event.id}  -> \\[200\\] \\d+ ms`))
      }
    } finally {
      await listener.stop('SIGINT')
    }
  })

  it("prints the receiver's status when it refuses, and stops at Ctrl-C with status 0", async () => {
    const listener = runTs(
      ['src/cli.ts', 'listen', '--forward-to', `${receiver.url}/teapot`, '--key', t.account.sk_test_key],
      {
        JACKDAW_API_URL: t.url,
      },
    )
    await listener.waitFor(/Ready/)
    await charge(500)
    await listener.waitFor(/charge\.succeeded\s+evt_\w+ {2}-> \[418\]/)
    expect(await listener.stop('SIGINT')).toBe(0)
  })

  it('says "Ready" once its stream is open: an event made right after it is forwarded, the service some way off', async () => {
    const proxy = await distant(t.url, 1000)
    const listener = runTs(['src/cli.ts', 'listen', '--forward-to', `${receiver.url}/ready`, '--api-url', proxy.url], {
      JACKDAW_API_KEY: t.account.sk_test_key,
    })
    try {
      await listener.waitFor(/Ready/)
      const made = await charge(1100)
      const forwarded = await receiver.waitFor((r) => r.body.includes(made), 5_000).catch(() => undefined)
      expect(forwarded, listener.output()).toBeDefined()
      await listener.waitFor(/^\d\d:\d\d:\d\d\.\d{3} {2}charge\.succeeded\s+evt_\w+ {2}-> \[200\] \d+ ms$/m)
    } finally {
      await listener.stop('SIGINT')
      await proxy.close()
    }
  })

  it('resumes a connection dropped before any event came where the stream began: an event made during the drop is forwarded', async () => {
    const listener = runTs(['src/cli.ts', 'listen', '--forward-to', `${receiver.url}/early-drop`], {
      JACKDAW_API_URL: t.url,
      JACKDAW_API_KEY: t.account.sk_test_key,
    })
    try {
      await listener.waitFor(/Ready/)
      t.app.server.closeAllConnections()
      const during = await charge(1200)
      const [, resumedAfter] = await listener.waitFor(/connection lost .*; resuming after (\S+)/)
      expect(resumedAfter).toMatch(/^evt_[0-9a-f]{32}$/)
      const forwarded = await receiver.waitFor((r) => r.body.includes(during), 5_000).catch(() => undefined)
      expect(forwarded, listener.output()).toBeDefined()
    } finally {
      await listener.stop('SIGINT')
    }
  })

  it('without a key, or with a wrong one, says so and fails', async () => {
    const none = await runToEnd(['src/cli.ts', 'listen', '--forward-to', receiver.url], {
      JACKDAW_API_URL: t.url,
      JACKDAW_API_KEY: undefined,
    })
    expect(none.code).toBe(2)
    expect(none.output).toMatch(/--key \(or JACKDAW_API_KEY\) is required/)
    const wrong = await runToEnd(
      ['src/cli.ts', 'listen', '--forward-to', receiver.url, '--key', 'sk_test_000000000000000000000000'],
      { JACKDAW_API_URL: t.url },
    )
    expect(wrong.code).toBe(1)
    expect(wrong.output).toMatch(/the service answered 401/)
  })

  it('refuses a --forward-to that is not an http or https URL, as a usage error', async () => {
    for (const target of ['notaurl', 'ftp://127.0.0.1/hook']) {
      const bad = await runToEnd(['src/cli.ts', 'listen', '--forward-to', target], {
        JACKDAW_API_URL: t.url,
        JACKDAW_API_KEY: t.account.sk_test_key,
      })
      expect(bad.code, target).toBe(2)
      expect(bad.output).toContain(`--forward-to must be an http or https URL, not "${target}"`)
      expect(bad.output).not.toMatch(/ at /)
    }
  })

  it('refuses a --forward-to whose host is no host name or address, as a usage error, before it starts', async () => {
    const targets = ['http://a..b/hooks', 'http://*.example.com/hooks', 'http://a,b/hooks']
    const runs = targets.map((target) => {
      const run = runTs(['src/cli.ts', 'listen', '--forward-to', target], {
        JACKDAW_API_URL: t.url,
        JACKDAW_API_KEY: t.account.sk_test_key,
      })
      // one that took the host after all would forward until stopped
      onTestFinished(() => void run.stop('SIGINT'))
      return run
    })
    for (const [i, run] of runs.entries()) {
      const host = new URL(targets[i] as string).hostname
      const code = await Promise.race([run.exited, run.waitFor(/Ready/).then(() => 'forwarding')])
      expect(code, run.output()).toBe(2)
      expect(run.output()).toContain(`--forward-to must name a host by its name or address, not "${host}"`)
      expect(run.output()).not.toMatch(/ at /)
      expect(run.output()).not.toMatch(/Forwarding/)
    }
  })

  it('refuses an event type no event has, naming the types there are', async () => {
    const typo = await runToEnd(
      ['src/cli.ts', 'listen', '--forward-to', receiver.url, '--events', 'charge.succeeded,charge.succeded'],
      { JACKDAW_API_URL: t.url, JACKDAW_API_KEY: t.account.sk_test_key },
    )
    expect(typo.code).toBe(2)
    expect(typo.output).toMatch(
      /no event has the type charge\.succeded; the types: charge\.pending, charge\.succeeded,/,
    )
    expect(typo.output).not.toMatch(/Forwarding/)
  })
})
