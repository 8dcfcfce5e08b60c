import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createClient,
  type Event,
  type JackdawClient,
  JackdawError,
  sign,
  verifySignature,
} from '../../src/client/index.js'
import { TEST_CARD } from '../helpers/app.js'
import { type ListeningApp, listeningApp, recorder } from '../helpers/listening.js'

/**
 * The typed client against the running service on a real port: every operation of the OpenAPI
 * document is called through it, errors arrive as JackdawError with the envelope, POSTs carry an
 * idempotency key that makes its retries safe (client-retries.test.ts retries them).
 */

const ADMIN_TOKEN = 'operator-token-for-the-client-test'
let t: ListeningApp
let jackdaw: JackdawClient
let receiver: Awaited<ReturnType<typeof recorder>>
let failNotify = true
/** each request the client sent: method and path */
const sent: { method: string; path: string; headers: Headers }[] = []

beforeAll(async () => {
  receiver = await recorder(() => (failNotify ? 500 : 200))
  t = await listeningApp(
    {},
    { notify: { schedule: [], timeoutMs: 2000, pollMs: 50 }, eventStream: { pollMs: 50 }, adminToken: ADMIN_TOKEN },
  )
  jackdaw = createClient({
    apiKey: t.account.sk_test_key,
    baseUrl: t.url,
    fetch: (input, init) => {
      const url = new URL(String(input))
      sent.push({ method: init?.method ?? 'GET', path: url.pathname, headers: new Headers(init?.headers) })
      return fetch(input, init)
    },
  })
})
afterAll(async () => {
  await t.close()
  await receiver.close()
})

const card = () => ({ type: 'card' as const, card: { ...TEST_CARD } })
const redirect = () => ({ success: `${receiver.url}/ok`, fail: `${receiver.url}/fail`, notify: `${receiver.url}/hook` })

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() - started > timeoutMs) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('the client against the service', () => {
  it('account: retrieves the account of the key and rolls its webhook secret', async () => {
    const me = await jackdaw.me.retrieve()
    expect(me).toMatchObject({ object: 'account', id: t.account.id, livemode: false })
    const rolled = await jackdaw.me.rollWebhookSecret()
    expect(rolled.secret).toMatch(/^whsec_/)
    expect((await jackdaw.me.retrieve()).webhook_secret).toBe(rolled.secret)
  })

  it("test clock: reads the account's clock and moves it forward", async () => {
    const before = await jackdaw.testClock.retrieve()
    expect(before).toMatchObject({ object: 'test_clock', offset_seconds: 0 })
    const after = await jackdaw.testClock.advance({ seconds: 3600 })
    expect(after.offset_seconds).toBe(3600)
    expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(3600_000)
    const refused = await jackdaw.testClock.advance({ seconds: 0 }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(JackdawError)
    expect(refused).toMatchObject({ status: 422, code: 'parameter_invalid' })
  })

  it("test faults: replaces and reads the account's fault rules", async () => {
    const rules = [{ notify: 'duplicate' as const }]
    expect(await jackdaw.testFaults.update(rules)).toEqual({ object: 'test_faults', rules })
    expect((await jackdaw.testFaults.retrieve()).rules).toEqual(rules)
    expect((await jackdaw.testFaults.update([])).rules).toEqual([])
  })

  it("accounts: the operator's token makes an account whose keys work, and removes it", async () => {
    const operator = createClient({
      apiKey: ADMIN_TOKEN,
      baseUrl: t.url,
      fetch: (input, init) => {
        sent.push({
          method: init?.method ?? 'GET',
          path: new URL(String(input)).pathname,
          headers: new Headers(init?.headers),
        })
        return fetch(input, init)
      },
    })
    const made = await operator.accounts.create({ name: 'Client shop' })
    const theirs = createClient({ apiKey: made.sk_test_key, baseUrl: t.url })
    expect(await theirs.me.retrieve()).toMatchObject({ id: made.id, name: 'Client shop' })
    expect(await operator.accounts.delete(made.id)).toEqual({ id: made.id, object: 'account', deleted: true })
    await expect(
      createClient({ apiKey: made.sk_test_key, baseUrl: t.url, maxRetries: 0 }).me.retrieve(),
    ).rejects.toMatchObject({
      status: 401,
    })
  })

  it('sources: creates and retrieves; the public key may create', async () => {
    const publicClient = createClient({ apiKey: t.account.pk_test_key, baseUrl: t.url })
    const src = await publicClient.sources.create(card())
    expect(src).toMatchObject({ object: 'source', type: 'card', used: false })
    expect(src.card?.last4).toBe('4242')
    expect(await jackdaw.sources.retrieve(src.id)).toEqual(src)
  })

  it('customers: create, retrieve, by email, update, attach and detach a source, list, delete', async () => {
    const email = `client.${Date.now()}@example.com`
    const cus = await jackdaw.customers.create({ email, description: 'Client test', metadata: { tier: 'gold' } })
    expect(await jackdaw.customers.retrieve(cus.id as string)).toEqual(cus)
    expect((await jackdaw.customers.byEmail(email)).id).toBe(cus.id)
    const updated = await jackdaw.customers.update(cus.id as string, { description: 'Updated' })
    expect(updated.description).toBe('Updated')
    const src = await jackdaw.sources.create(card())
    const attached = await jackdaw.customers.attachSource(cus.id as string, { source: src.id })
    expect(attached.sources.map((s) => s.id)).toEqual([src.id])
    const detached = await jackdaw.customers.detachSource(cus.id as string, src.id)
    expect(detached.sources).toEqual([])
    const page = await jackdaw.customers.list({ limit: 1 })
    expect(page.data[0]?.id).toBe(cus.id)
    expect(await jackdaw.customers.delete(cus.id as string)).toEqual({ id: cus.id, object: 'customer', deleted: true })
  })

  it('charges: create, capture, refund, void, list by status, page through all, and a test-mode payer answer', async () => {
    const uncaptured = await jackdaw.charges.create({
      amount: 1500,
      currency: 'usd',
      source: (await jackdaw.sources.create(card())).id,
      capture: false,
    })
    expect(uncaptured).toMatchObject({ status: 'succeeded', captured: false })
    const captured = await jackdaw.charges.capture(uncaptured.id, { amount: 1000 })
    expect(captured).toMatchObject({ captured: true, amount: 1000 })
    const refunded = await jackdaw.charges.refund(captured.id, { amount: 400, reason: 'damaged' })
    expect(refunded.refunds.map((r) => r.amount)).toEqual([400])
    const toVoid = await jackdaw.charges.create({
      amount: 700,
      currency: 'jpy',
      source: (await jackdaw.sources.create(card())).id,
      capture: false,
    })
    expect((await jackdaw.charges.void(toVoid.id)).status).toBe('voided')
    expect((await jackdaw.charges.list({ status: 'voided' })).data.map((c) => c.id)).toEqual([toVoid.id])
    expect(await jackdaw.charges.retrieve(refunded.id)).toEqual(refunded)

    const threeDs = await jackdaw.charges.create({
      amount: 900,
      currency: 'eur',
      source: (
        await jackdaw.sources.create({
          ...card(),
          card: { ...TEST_CARD, number: '4000000000003220' },
          redirect: redirect(),
        })
      ).id,
    })
    expect(threeDs.status).toBe('pending')
    expect(threeDs.source.action?.url).toMatch(/\/v2\/hosted\/charges\//)
    expect((await jackdaw.charges.testAuthorize(threeDs.id, { decision: 'approve' })).status).toBe('succeeded')

    const all: string[] = []
    for await (const c of jackdaw.all(jackdaw.charges.list, { limit: 2 })) all.push(c.id)
    expect(all).toEqual([threeDs.id, toVoid.id, uncaptured.id])
    // with the list's own filter, typed as its function takes it
    const voided: string[] = []
    for await (const c of jackdaw.all(jackdaw.charges.list, { status: 'voided', limit: 1 })) voided.push(c.id)
    expect(voided).toEqual([toVoid.id])
  })

  it('errors are JackdawError with the status, the envelope and the request id', async () => {
    const missing = await jackdaw.charges.retrieve('ch_nothing').catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(JackdawError)
    expect(missing).toMatchObject({ status: 404, type: 'not_found_error', code: 'resource_missing' })
    expect((missing as JackdawError).requestId).toMatch(/^req_/)
    const invalid = await jackdaw.charges
      .create({ amount: 0, currency: 'usd', source: 'src_x' })
      .catch((e: JackdawError) => e)
    expect(invalid).toMatchObject({ status: 422, code: 'parameter_invalid' })
    expect((invalid as JackdawError).detail?.[0]?.loc).toEqual(['body', 'amount'])
    const charge = await jackdaw.charges.create({
      amount: 100,
      currency: 'usd',
      source: (await jackdaw.sources.create(card())).id,
    })
    const notPending = await jackdaw.charges
      .verify(charge.id, { confirmation_id: 'conf_nothing', otp: '123456' })
      .catch((e: JackdawError) => e)
    expect(notPending).toBeInstanceOf(JackdawError)
    expect((notPending as JackdawError).status).toBe(400)
    const wrongKey = createClient({ apiKey: 'sk_test_000000000000000000000000', baseUrl: t.url })
    await expect(wrongKey.me.retrieve()).rejects.toMatchObject({ status: 401, type: 'authentication_error' })
  })

  it('events and deliveries: list, retrieve, stream, and redeliver a failed notify call', async () => {
    const controller = new AbortController()
    const streamed: Event[] = []
    const reading = (async () => {
      try {
        for await (const e of jackdaw.events.stream({ signal: controller.signal })) streamed.push(e)
      } catch {
        // aborted
      }
    })()
    await new Promise((r) => setTimeout(r, 200))
    failNotify = true
    const charge = await jackdaw.charges.create({
      amount: 2500,
      currency: 'usd',
      source: (await jackdaw.sources.create({ ...card(), redirect: redirect() })).id,
    })
    const events = await jackdaw.events.list({ charge: charge.id })
    expect(events.data.map((e) => e.type)).toEqual(['charge.succeeded'])
    const event = await jackdaw.events.retrieve(events.data[0]?.id as string)
    expect(event.data.object.id).toBe(charge.id)
    await until(async () => (streamed.length > 0 ? true : undefined))
    controller.abort()
    await reading
    expect(streamed).toEqual([event])

    // a stream asked to start after an event yields none before it, though the service's
    // look-back sends the events of the seconds before it again
    const given = await jackdaw.charges.create({
      amount: 2600,
      currency: 'usd',
      source: (await jackdaw.sources.create(card())).id,
    })
    const givenEvent = (await jackdaw.events.list({ charge: given.id })).data[0] as Event
    const resumed: Event[] = []
    const stop = new AbortController()
    const resuming = (async () => {
      try {
        for await (const e of jackdaw.events.stream({ lastEventId: givenEvent.id, signal: stop.signal }))
          resumed.push(e)
      } catch {
        // aborted
      }
    })()
    const next = await jackdaw.charges.create({
      amount: 2700,
      currency: 'usd',
      source: (await jackdaw.sources.create(card())).id,
    })
    await until(async () => (resumed.some((e) => e.data.object.id === next.id) ? true : undefined))
    stop.abort()
    await resuming
    expect(resumed.map((e) => e.data.object.id)).toEqual([next.id])

    const failed = await until(async () => {
      const d = (await jackdaw.deliveries.list({ charge: charge.id })).data[0]
      return d?.status === 'failed' ? d : undefined
    })
    expect(await jackdaw.deliveries.retrieve(failed.id)).toEqual(failed)
    failNotify = false
    expect((await jackdaw.deliveries.redeliver(failed.id)).status).toBe('pending')
    const delivered = await until(async () => {
      const d = await jackdaw.deliveries.retrieve(failed.id)
      return d.status === 'delivered' ? d : undefined
    })
    expect(delivered.attempts.map((a) => a.status_code)).toEqual([500, 200])
    // the verifier the client exports accepts the call as the receiver got it
    const call = receiver.received.filter((r) => r.url === '/hook').at(-1)
    const secret = (await jackdaw.me.retrieve()).webhook_secret
    expect(verifySignature(call?.body ?? '', call?.headers['jackdaw-signature'], secret)).toBe(true)
    expect(verifySignature(`${call?.body} `, call?.headers['jackdaw-signature'], secret)).toBe(false)
    expect(verifySignature('{}', sign('{}', secret), secret)).toBe(true)
  })

  it('scenarios: lists them and runs one with overrides, typed', async () => {
    const list = await jackdaw.scenarios.list()
    expect(list.data.map((s) => s.name)).toContain('charge.refunded')
    const run = await jackdaw.scenarios.run('charge.refunded', { amount: 2500, metadata: { from: 'client' } })
    expect(run).toMatchObject({ object: 'scenario_run', scenario: 'charge.refunded' })
    const charge = await jackdaw.charges.retrieve(run.objects.charge?.id as string)
    expect(charge).toMatchObject({ status: 'refunded', amount: 2500, metadata: { from: 'client' } })
    expect(run.objects.refund?.amount).toBe(2500)
    const refused = await jackdaw.scenarios.run('charge.failed', { decline_code: 'nope' as never }).catch((e) => e)
    expect(refused).toMatchObject({ status: 422, code: 'parameter_invalid' })
  })

  it('called every operation of the OpenAPI document', async () => {
    const doc = (await (await fetch(`${t.url}/v2/openapi.json`)).json()) as { paths: Record<string, object> }
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })),
    )
    expect(operations.length).toBeGreaterThan(20)
    const uncalled = operations.filter(({ method, path }) => {
      const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+').replace(/\/$/, '')}/?$`)
      return !sent.some((s) => s.method === method && pattern.test(s.path))
    })
    expect(uncalled).toEqual([])
    // and every POST carried an idempotency key
    for (const s of sent.filter((r) => r.method === 'POST')) expect(s.headers.get('idempotency-key')).toMatch(/^\S+$/)
  })
})
