import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config.js'
import { HttpProcessor } from '../../src/processor/http-connector.js'
import { liveProcessorOf } from '../../src/processor/live.js'
import { type PaymentRequest, ProcessorError } from '../../src/processor/processor.js'
import { createProcessorServer } from '../../src/processor/server.js'
import { Simulator } from '../../src/processor/simulator.js'
import { type Client, cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'

const SECRET = 'processor-shared-secret-0123456789'
/** The simulator as a processor service, noting the reversals and voids it is asked for. */
class ReversalsNoted extends Simulator {
  reversed: string[] = []
  voids = 0
  override async void() {
    this.voids++
    return super.void()
  }
  override async reverse(chargeId: string) {
    this.reversed.push(chargeId)
    return super.reverse(chargeId)
  }
}
const simulator = new ReversalsNoted()
/** Whether the store still owes the processor a charge's reversal. */
const OWED = 'SELECT reversal_asked_at IS NOT NULL AS owed FROM charges WHERE id = $1'
const processor = createProcessorServer({ processor: simulator, secret: SECRET })
let t: TestApp
let down: TestApp
let noLive: TestApp

/**
 * An address nothing listens on, so a connection to it is refused: one the system handed out and
 * took back. (Port 9 would not do: fetch refuses it before connecting, as a port it never uses.)
 */
async function refusingAddress(): Promise<string> {
  const server = net.createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  await new Promise((r) => server.close(r))
  return `http://127.0.0.1:${port}`
}

beforeAll(async () => {
  const address = await processor.listen({ port: 0, host: '127.0.0.1' })
  t = await testApp({ liveProcessor: new HttpProcessor(address, SECRET, 2_000) })
  // a port nothing listens on: the processor is unreachable
  down = await testApp({ liveProcessor: new HttpProcessor(await refusingAddress(), SECRET, 2_000) })
  noLive = await testApp()
})
afterAll(async () => {
  await t.close()
  await down.close()
  await noLive.close()
  await processor.close()
})

async function liveCharge(app: TestApp, source: object, extra: object = {}) {
  const src = await app.skLive.post('/v2/sources/', source)
  expect(src.status).toBe(200)
  expect(src.body.livemode).toBe(true)
  return app.skLive.post('/v2/charges/', { amount: 2500, currency: 'eur', source: src.body.id, ...extra })
}

/** The payer's answer on the hosted page at `url`, posted as their browser would. */
function payerAnswers(url: string, decision: 'approve' | 'decline') {
  const page = new URL(url)
  return t.anon.post(
    page.pathname,
    new URLSearchParams({ token: page.searchParams.get('token') as string, decision }).toString(),
    { 'content-type': 'application/x-www-form-urlencoded' },
  )
}

describe('live mode through a processor reached over HTTP', () => {
  it('authorizes, captures and refunds through the connector', async () => {
    const c = await liveCharge(t, cardSource(), { capture: false })
    expect(c.status).toBe(201)
    expect(c.body).toMatchObject({ livemode: true, status: 'succeeded', authorized: true, captured: false })
    // live mode has no test card table: the card's details are not made up
    expect(c.body.source.card).toMatchObject({ brand: 'visa', country: 'unknown', funding: 'unknown' })
    const cap = await t.skLive.post(`/v2/charges/${c.body.id}/capture`, { amount: 2000 })
    expect(cap.body).toMatchObject({ captured: true, amount: 2000 })
    const ref = await t.skLive.post(`/v2/charges/${c.body.id}/refund`, {})
    expect(ref.body).toMatchObject({ status: 'refunded', amount_refunded: 2000 })
  })

  it('passes declines and payer steps through', async () => {
    const declined = await liveCharge(t, cardSource({ number: '4000000000000002' }))
    expect(declined.body.status).toBe('failed')
    expect(declined.body.failure_data.code).toBe('card_declined')
    const wallet = await liveCharge(t, { type: 'wallet_b', redirect: REDIRECT })
    expect(wallet.body.status).toBe('pending')
    expect(wallet.body.source.action.type).toBe('redirect_to_url')
    const url = new URL(wallet.body.source.action.url)
    const post = await t.app.inject({
      method: 'POST',
      url: url.pathname,
      payload: `token=${url.searchParams.get('token')}&decision=approve`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(post.headers.location).toBe(REDIRECT.success)
    expect((await t.skLive.get(`/v2/charges/${wallet.body.id}`)).body.status).toBe('succeeded')
  })

  it('voids an authorization through the connector', async () => {
    const c = await liveCharge(t, cardSource(), { capture: false })
    expect(c.body).toMatchObject({ status: 'succeeded', authorized: true, captured: false })
    const before = simulator.voids
    const v = await t.skLive.post(`/v2/charges/${c.body.id}/void`)
    expect(v.status, v.text).toBe(200)
    expect(v.body).toMatchObject({ livemode: true, status: 'voided', authorized: false, captured: false })
    // asked of the processor over the protocol
    expect(simulator.voids).toBe(before + 1)
    const cap = await t.skLive.post(`/v2/charges/${c.body.id}/capture`)
    expect(cap.body.error.code).toBe('charge_not_capturable')
  })

  it("a card's 3-D Secure step: approved, and authenticated then declined by the issuer", async () => {
    const approved = await liveCharge(t, { ...cardSource({ number: '4000000000003220' }), redirect: REDIRECT })
    expect(approved.body.status).toBe('pending')
    expect(approved.body.source.action.type).toBe('redirect_to_url')
    const ok = await payerAnswers(approved.body.source.action.url, 'approve')
    expect(ok.headers.location).toBe(REDIRECT.success)
    expect((await t.skLive.get(`/v2/charges/${approved.body.id}`)).body).toMatchObject({
      status: 'succeeded',
      captured: true,
    })

    const declined = await liveCharge(t, { ...cardSource({ number: '4000000000003246' }), redirect: REDIRECT })
    expect(declined.body.status).toBe('pending')
    const no = await payerAnswers(declined.body.source.action.url, 'approve')
    expect(no.headers.location).toBe(REDIRECT.fail)
    const after = (await t.skLive.get(`/v2/charges/${declined.body.id}`)).body
    expect(after.status).toBe('failed')
    expect(after.failure_data.code).toBe('card_declined')
  })

  it('transfer_a: linked on the bank page, then charged again by OTP', async () => {
    const customer = await t.skLive.post('/v2/customers/', { email: 'ann@example.com', description: 'Ann' })
    const src = await t.skLive.post('/v2/sources/', { type: 'transfer_a', redirect: REDIRECT })
    const attached = await t.skLive.post(`/v2/customers/${customer.body.id}/sources`, { source: src.body.id })
    expect(attached.status, attached.text).toBe(200)
    const charge = () =>
      t.skLive.post('/v2/charges/', { amount: 500, currency: 'php', source: src.body.id, customer: customer.body.id })
    const first = await charge()
    expect(first.body.source.action.type).toBe('redirect_to_url')
    expect((await payerAnswers(first.body.source.action.url, 'approve')).headers.location).toBe(REDIRECT.success)

    const second = await charge()
    expect(second.body.status).toBe('pending')
    expect(second.body.source.action).toEqual({ type: 'verify_otp', confirmation_id: expect.any(String) })
    const verify = (otp: string) =>
      t.skLive.post(`/v2/charges/${second.body.id}/verify`, {
        confirmation_id: second.body.source.action.confirmation_id,
        otp,
      })
    const wrong = await verify('111111')
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.code).toBe('otp_invalid')
    const right = await verify('123456')
    expect(right.status, right.text).toBe(200)
    expect(right.body).toMatchObject({ livemode: true, status: 'succeeded', captured: true, amount: 500 })
  })

  it('a processor timeout fails the charge with processor_timeout and reverses it there', async () => {
    const c = await liveCharge(t, cardSource({ number: '4000000000000036' }))
    expect(c.status).toBe(201)
    expect(c.body.status).toBe('failed')
    expect(c.body.failure_data.code).toBe('processor_timeout')
    // the processor may have authorized it all the same: the reversal goes over the protocol, after the answer
    await t.app.services.charges.waitForReversals()
    expect(simulator.reversed).toEqual([c.body.id])
    expect((await t.db.query(OWED, [c.body.id])).rows[0]).toEqual({ owed: false })
  })

  it('an unreachable processor fails new charges and leaves existing ones as they were', async () => {
    const c = await liveCharge(down, cardSource())
    expect(c.status).toBe(201)
    expect(c.body.status).toBe('failed')
    expect(c.body.failure_data).toMatchObject({
      code: 'processor_unavailable',
      reason: 'The payment processor could not be reached',
      provider_response: { error: 'unreachable' },
    })
    // no connection was made, so the request never left: nothing can be held there to reverse
    await down.app.services.charges.waitForReversals()
    expect((await down.db.query(OWED, [c.body.id])).rows[0]).toEqual({ owed: false })
    // the source was consumed by the failed attempt, as a declined card's would be
    const again = await down.skLive.post('/v2/charges/', { amount: 1, currency: 'eur', source: c.body.source.id })
    expect(again.body.error.code).toBe('source_used')
  })

  it('a processor that refuses the shared secret is reported, not trusted', async () => {
    const wrong = await testApp({
      liveProcessor: new HttpProcessor(
        `http://127.0.0.1:${(processor.server.address() as { port: number }).port}`,
        'not-the-secret-at-all',
        2_000,
      ),
    })
    try {
      const c = await liveCharge(wrong, cardSource())
      expect(c.body.status).toBe('failed')
      expect(c.body.failure_data.code).toBe('processor_unavailable')
      // a 401 is an answer: the processor took nothing, so there is nothing to reverse
      await wrong.app.services.charges.waitForReversals()
      expect((await wrong.db.query(OWED, [c.body.id])).rows[0]).toEqual({ owed: false })
      expect(simulator.reversed).not.toContain(c.body.id)
    } finally {
      await wrong.close()
    }
  })

  it('live mode without a configured processor refuses charges clearly; test mode still works', async () => {
    const src = await noLive.skLive.post('/v2/sources/', cardSource())
    const c = await noLive.skLive.post('/v2/charges/', { amount: 100, currency: 'usd', source: src.body.id })
    expect(c.status).toBe(400)
    expect(c.body.error.code).toBe('livemode_unavailable')
    // nothing was consumed by the refusal
    expect((await noLive.skLive.get(`/v2/sources/${src.body.id}`)).body.used).toBe(false)
    const testSrc = await noLive.sk.post('/v2/sources/', cardSource())
    const ok = await noLive.sk.post('/v2/charges/', { amount: 100, currency: 'usd', source: testSrc.body.id })
    expect(ok.body.status).toBe('succeeded')
  })
})

describe("a live payer's hosted link", () => {
  const wallet = { type: 'wallet_a', redirect: { success: 'https://shop.example/ok', fail: 'https://shop.example/no' } }
  const pendingCharge = async (c: Client, headers: Record<string, string>) => {
    const src = await c.post('/v2/sources/', wallet)
    expect(src.status, src.text).toBe(200)
    return c.post('/v2/charges/', { amount: 100, currency: 'usd', source: src.body.id }, headers)
  }

  it('is never built from the Host header: without a public address a live charge is refused', async () => {
    const unset = await testApp({ liveProcessor: new Simulator(), publicUrl: undefined })
    try {
      const refused = await pendingCharge(unset.skLive, { host: 'evil.example' })
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe('livemode_unavailable')
      expect(refused.body.error.message).toMatch(/JACKDAW_PUBLIC_URL/)
      // test mode goes on following the request's address
      const test = await pendingCharge(unset.sk, { host: 'dev.example:8080' })
      expect(test.body.source.action.url).toMatch(/^http:\/\/dev\.example:8080\/v2\/hosted\/charges\//)
    } finally {
      await unset.close()
    }
  })

  it('is on the public address, whatever Host the request names', async () => {
    const set = await testApp({ liveProcessor: new Simulator(), publicUrl: 'https://pay.example/' })
    try {
      const charge = await pendingCharge(set.skLive, { host: 'evil.example' })
      expect(charge.status, charge.text).toBe(201)
      expect(charge.body.source.action.url).toMatch(/^https:\/\/pay\.example\/v2\/hosted\/charges\/ch_/)
    } finally {
      await set.close()
    }
  })
})

describe('the way to the live processor', () => {
  const settings = (url: string, publicUrl = 'https://pay.example') =>
    parseConfig({
      JACKDAW_LIVE_PROCESSOR_URL: url,
      JACKDAW_LIVE_PROCESSOR_SECRET: SECRET,
      JACKDAW_PUBLIC_URL: publicUrl,
    })

  it('needs the public address of the hosted pages, over https unless it names this machine', () => {
    const url = 'https://processor.example'
    const noPublicUrl = parseConfig({ JACKDAW_LIVE_PROCESSOR_URL: url, JACKDAW_LIVE_PROCESSOR_SECRET: SECRET })
    expect(() => liveProcessorOf(noPublicUrl)).toThrow(/JACKDAW_PUBLIC_URL is required with JACKDAW_LIVE_PROCESSOR_URL/)
    expect(() => liveProcessorOf(settings(url, 'http://pay.example'))).toThrow(/JACKDAW_PUBLIC_URL must use https/)
    expect(liveProcessorOf(settings(url, 'http://localhost:8080'))).toBeInstanceOf(HttpProcessor)
    expect(liveProcessorOf(settings(url))).toBeInstanceOf(HttpProcessor)
  })

  it('must be https unless the processor is on this machine: card data travels on it', () => {
    for (const url of ['http://processor.example', 'http://10.0.0.5:8443', 'http://127.0.0.1.example.com']) {
      expect(() => liveProcessorOf(settings(url)), url).toThrow(/must use https/)
    }
    for (const url of [
      'https://processor.example',
      'http://127.0.0.1:9100',
      'http://localhost:9100',
      'http://[::1]:9100',
    ]) {
      expect(liveProcessorOf(settings(url)), url).toBeInstanceOf(HttpProcessor)
    }
  })

  it('needs a recovery grace longer than a call to it may take', () => {
    const url = 'https://processor.example'
    const grace = (ms: string) =>
      parseConfig({
        JACKDAW_LIVE_PROCESSOR_URL: url,
        JACKDAW_LIVE_PROCESSOR_SECRET: SECRET,
        JACKDAW_PUBLIC_URL: 'https://pay.example',
        JACKDAW_RECOVERY_GRACE_MS: ms,
      })
    for (const ms of ['100', '5000', '10000']) {
      expect(() => liveProcessorOf(grace(ms)), ms).toThrow(/JACKDAW_RECOVERY_GRACE_MS must be longer/)
    }
    expect(liveProcessorOf(grace('10001'))).toBeInstanceOf(HttpProcessor)
    // without a live processor there is no call to outlast
    expect(liveProcessorOf(parseConfig({ JACKDAW_RECOVERY_GRACE_MS: '100' }))).toBeUndefined()
  })

  it('tells a connection never made from one that broke after the request was sent', async () => {
    const never = new HttpProcessor(await refusingAddress(), SECRET, 2_000)
    await expect(never.capture('ref', 100, 'usd')).rejects.toMatchObject({ kind: 'unreachable', didNothing: true })
    // takes the request's first bytes, then hangs up without an answer: it may have acted on it
    let received = 0
    const hangsUp = net.createServer((socket) => {
      socket.once('data', () => {
        received++
        socket.destroy()
      })
    })
    await new Promise<void>((r) => hangsUp.listen(0, '127.0.0.1', r))
    try {
      const broke = new HttpProcessor(`http://127.0.0.1:${(hangsUp.address() as AddressInfo).port}`, SECRET, 2_000)
      await expect(broke.capture('ref', 100, 'usd')).rejects.toMatchObject({ kind: 'unavailable', didNothing: false })
      expect(received).toBe(1)
    } finally {
      hangsUp.close()
    }
  })

  it('a redirect from it is an answer: the card is not sent on to another address', async () => {
    const elsewhere = http.createServer((_req, res) => res.end('{}'))
    let hitsElsewhere = 0
    elsewhere.on('request', () => hitsElsewhere++)
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r))
    const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`
    const redirecting = http.createServer((req, res) => {
      res.writeHead(307, { location: `${target}${req.url}` }).end()
    })
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r))
    try {
      const connector = new HttpProcessor(`http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`, SECRET)
      const request = {
        amount: 100,
        currency: 'usd',
        source: { type: 'card', card: { number: '4242424242424242', cvc: '123', exp_month: 12, exp_year: 2035 } },
      } as unknown as PaymentRequest
      await expect(connector.authorize(request)).rejects.toBeInstanceOf(ProcessorError)
      expect(hitsElsewhere).toBe(0)
    } finally {
      redirecting.close()
      elsewhere.close()
    }
  })
})
