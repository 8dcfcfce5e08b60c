import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifySignature } from '../../src/notify/signature.js'
import { type Json, type TestApp, testApp } from '../helpers/app.js'
import { type Receiver, startReceiver, waitFor } from '../notify/notify-harness.js'

let t: TestApp
let receiver: Receiver
beforeAll(async () => {
  t = await testApp({}, { notify: { schedule: [], timeoutMs: 2000, pollMs: 50 } })
  receiver = await startReceiver(() => 200)
})
afterAll(async () => {
  await receiver.close()
  await t.close()
})

const run = (name: string, body: Json = {}) => t.sk.post(`/v2/test/scenarios/${name}`, body)
const chargeCount = async () => (await t.sk.get('/v2/charges/?limit=100')).body.data.length
const sourceCount = async () =>
  Number((await t.db.query('SELECT count(*) AS n FROM sources WHERE account_id = $1', [t.account.id])).rows[0]?.n)

describe('the list of scenarios', () => {
  it('names every scenario with its description and the overrides it takes, typed', async () => {
    const res = await t.sk.get('/v2/test/scenarios')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ object: 'list', next: null })
    const byName = Object.fromEntries(res.body.data.map((s: Json) => [s.name, s]))
    expect(Object.keys(byName).sort()).toEqual(
      [
        'charge.succeeded',
        'charge.captured',
        'charge.voided',
        'charge.failed',
        'charge.refunded',
        'charge.partially_refunded',
        'charge.3ds_approved',
        'charge.3ds_declined',
        'charge.payment_expired',
        'charge.otp_verified',
        'customer.source_attached',
      ].sort(),
    )
    for (const s of res.body.data) {
      expect(s.object).toBe('scenario')
      expect(s.description.length).toBeGreaterThan(10)
      for (const o of s.overrides) expect(o.description.length).toBeGreaterThan(5)
    }
    const types = Object.fromEntries(byName['charge.failed'].overrides.map((o: Json) => [o.name, o.type]))
    expect(types).toEqual({
      amount: 'integer',
      currency: 'string',
      metadata: 'object',
      notify: 'string',
      customer: 'string or object',
      decline_code: 'string',
    })
    expect(byName['customer.source_attached'].overrides.map((o: Json) => o.name)).toEqual(['customer'])
    expect(byName['charge.3ds_approved'].overrides.map((o: Json) => o.name)).not.toContain('customer')
  })

  it('is in the OpenAPI document under the test-mode tag', async () => {
    const doc = (await t.anon.get('/v2/openapi.json')).body
    expect(doc.paths['/v2/test/scenarios'].get.tags).toEqual(['test-mode'])
    expect(doc.paths['/v2/test/scenarios/{name}'].post.tags).toEqual(['test-mode'])
    // a run refuses the fault header, so the document does not offer it there
    const headers = (op: Json) => (op.parameters ?? []).map((p: Json) => p.name)
    expect(headers(doc.paths['/v2/test/scenarios/{name}'].post)).not.toContain('Jackdaw-Test-Fault')
    expect(headers(doc.paths['/v2/charges/'].post)).toContain('Jackdaw-Test-Fault')
    expect(doc.paths['/v2/test/charges/{ch_id}/authorize'].post.tags).toEqual(['test-mode'])
  })
})

describe('overrides', () => {
  it('amount, currency and metadata go onto the charge', async () => {
    const res = await run('charge.succeeded', { amount: 4321, currency: 'EUR', metadata: { order: 'A-1', n: 2 } })
    expect(res.status).toBe(200)
    const charge = (await t.sk.get(`/v2/charges/${res.body.objects.charge.id}`)).body
    expect(charge).toMatchObject({ amount: 4321, currency: 'eur', metadata: { order: 'A-1', n: 2 } })
  })

  it('each decline code fails the charge with that code', async () => {
    for (const code of [
      'card_declined',
      'insufficient_funds',
      'lost_card',
      'stolen_card',
      'expired_card',
      'incorrect_cvc',
      'processing_error',
      'processor_timeout',
    ]) {
      const res = await run('charge.failed', { decline_code: code })
      expect(res.status, code).toBe(200)
      const charge = (await t.sk.get(`/v2/charges/${res.body.objects.charge.id}`)).body
      expect(charge, code).toMatchObject({ status: 'failed', failure_data: { code } })
    }
  })

  it('customer: a new one from an object, or an existing one by id, owns the source charged', async () => {
    const made = await run('charge.succeeded', {
      customer: { email: 'new@example.com', description: 'New payer', metadata: { tier: 'gold' } },
    })
    expect(made.status).toBe(200)
    const { customer, source, charge } = made.body.objects
    expect(customer).toMatchObject({ email: 'new@example.com', description: 'New payer', metadata: { tier: 'gold' } })
    expect(customer.sources.map((s: Json) => s.id)).toEqual([source.id])
    expect(source).toMatchObject({ vaulted: true })
    expect(charge.status).toBe('succeeded')

    const existing = (await t.sk.post('/v2/customers/', { email: 'old@example.com', description: 'Old payer' })).body
    for (const name of ['customer.source_attached', 'charge.otp_verified']) {
      const res = await run(name, { customer: existing.id })
      expect(res.status, name).toBe(200)
      expect(res.body.objects.customer.id).toBe(existing.id)
    }
    const after = (await t.sk.get(`/v2/customers/${existing.id}`)).body
    expect(after.sources).toHaveLength(2)
  })

  it("notify: the scenario's events are delivered, signed, to the address", async () => {
    const res = await run('charge.3ds_approved', { notify: receiver.url })
    expect(res.status).toBe(200)
    const { charge } = res.body.objects
    expect(charge.source.redirect.notify).toBe(receiver.url)
    const calls = await waitFor('two calls', async () => {
      const mine = receiver.calls.filter((c) => JSON.parse(c.body).data.object.id === charge.id)
      return mine.length >= 2 && mine
    })
    const secret = (await t.sk.get('/v2/me')).body.webhook_secret as string
    const types = calls.map((c) => JSON.parse(c.body).type).sort()
    expect(types).toEqual(['charge.pending', 'charge.succeeded'])
    for (const c of calls) expect(verifySignature(c.body, c.headers['jackdaw-signature'] as string, secret)).toBe(true)
    const events = (await t.sk.get(`/v2/events/?charge=${charge.id}`)).body.data.map((e: Json) => e.id).sort()
    expect(calls.map((c) => JSON.parse(c.body).id).sort()).toEqual(events)
  })
})

describe('refusals', () => {
  it('with a live key neither operation exists, whatever the body', async () => {
    for (const res of [
      await t.skLive.get('/v2/test/scenarios'),
      await t.skLive.post('/v2/test/scenarios/charge.succeeded', {}),
      await t.skLive.post('/v2/test/scenarios/charge.succeeded', { amount: 'lots' }),
      await t.skLive.post('/v2/test/scenarios/no.such', {}),
    ]) {
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe('route_missing')
    }
    expect((await t.pk.get('/v2/test/scenarios')).status).toBe(403)
    expect((await t.anon.post('/v2/test/scenarios/charge.succeeded', {})).status).toBe(401)
  })

  it('an unknown scenario is 404 resource_missing', async () => {
    const res = await run('charge.teleported')
    expect(res.status).toBe(404)
    expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'resource_missing', param: 'name' })
  })

  it('bad overrides are 422 (or 404 for a missing customer), and nothing is made', async () => {
    const before = { charges: await chargeCount(), sources: await sourceCount() }
    const cases: [string, Json, number, string, string][] = [
      ['charge.succeeded', { amount: 'ten' }, 422, 'parameter_invalid', 'amount'],
      ['charge.succeeded', { amount: 0 }, 422, 'parameter_invalid', 'amount'],
      ['charge.succeeded', { currency: 'xyz' }, 422, 'parameter_invalid', 'currency'],
      ['charge.succeeded', { currency: 12 }, 422, 'parameter_invalid', 'currency'],
      ['charge.succeeded', { metadata: 'x' }, 422, 'parameter_invalid', 'metadata'],
      ['charge.succeeded', { colour: 'red' }, 422, 'parameter_unknown', 'colour'],
      ['charge.succeeded', { decline_code: 'card_declined' }, 422, 'parameter_unknown', 'decline_code'],
      ['charge.3ds_approved', { customer: 'cus_x' }, 422, 'parameter_unknown', 'customer'],
      ['customer.source_attached', { amount: 100 }, 422, 'parameter_unknown', 'amount'],
      ['charge.failed', { decline_code: 'bad_luck' }, 422, 'parameter_invalid', 'decline_code'],
      ['charge.succeeded', { notify: 'ftp://example.com/x' }, 422, 'parameter_invalid', 'notify'],
      ['charge.succeeded', { notify: 42 }, 422, 'parameter_invalid', 'notify'],
      ['charge.succeeded', { customer: 42 }, 422, 'parameter_invalid', 'customer'],
      [
        'charge.succeeded',
        { customer: { email: 'no-description@example.com' } },
        422,
        'parameter_missing',
        'customer.description',
      ],
      [
        'charge.succeeded',
        { customer: { email: '4242424242424242@example.com', description: 'Ann' } },
        422,
        'parameter_invalid',
        'customer.email',
      ],
      ['charge.partially_refunded', { amount: 1 }, 422, 'parameter_invalid', 'amount'],
      ['charge.succeeded', { customer: 'cus_00000000000000000000000000000000' }, 404, 'resource_missing', 'customer'],
    ]
    for (const [name, body, status, code, param] of cases) {
      const res = await run(name, body)
      const what = `${name} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`
      expect(res.status, what).toBe(status)
      expect(res.body.error, what).toMatchObject({ code, param })
    }
    expect({ charges: await chargeCount(), sources: await sourceCount() }).toEqual(before)
    // a union's problem is told by the branch of the value's type, not as a failed union
    const long = await run('charge.succeeded', { metadata: { order: 'x'.repeat(501) } })
    expect(long.status).toBe(422)
    expect(long.body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'metadata.order',
      message: 'metadata.order must be at most 500 characters',
    })
    // a body its schema refuses names the rest of its problems too
    const all = await run('charge.succeeded', {
      currency: 5,
      customer: { email: '4242424242424242@example.com', description: 'Ann' },
      notify: 'http://10.1.2.3/n',
    })
    expect(all.status).toBe(422)
    expect(all.body.error.detail.map((d: Json) => d.loc.slice(1).join('.')).sort()).toEqual([
      'currency',
      'customer.email',
      'notify',
    ])
    expect({ charges: await chargeCount(), sources: await sourceCount() }).toEqual(before)
    const malformed = await t.sk.post('/v2/test/scenarios/charge.succeeded', '{"amount":', {
      'content-type': 'application/json',
    })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error.code).toBe('invalid_json')
  })

  it('refuses a Jackdaw-Test-Fault header (400), and nothing is made', async () => {
    const before = await chargeCount()
    const sources = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sources')).rows[0]?.n
    for (const name of ['charge.3ds_approved', 'charge.otp_verified', 'charge.refunded', 'charge.voided']) {
      for (const fault of ['processor_timeout', 'processor_unavailable', 'processor_latency=10']) {
        const res = await t.sk.post(`/v2/test/scenarios/${name}`, {}, { 'jackdaw-test-fault': fault })
        const what = `${name} ${fault}: ${res.text}`
        expect(res.status, what).toBe(400)
        expect(res.body.error, what).toMatchObject({ code: 'header_invalid', param: 'Jackdaw-Test-Fault' })
      }
    }
    expect(await chargeCount()).toBe(before)
    expect((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sources')).rows[0]?.n).toBe(sources)
    // and the same run without it goes through
    expect((await run('charge.voided')).status).toBe(200)
  })

  it('takes no body at all as no overrides', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/test/scenarios/charge.succeeded',
      headers: { authorization: `Bearer ${t.account.sk_test_key}` },
    })
    expect(res.statusCode).toBe(200)
    expect(JSON.parse(res.body).objects.charge.amount).toBe(1000)
  })
})
