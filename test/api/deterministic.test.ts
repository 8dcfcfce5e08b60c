import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, client, type Json, REDIRECT, type TestApp, testApp } from '../helpers/app.js'

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789'
const START = '2030-01-01T00:00:00.000000Z'

/** One service, and another on a database of its own: a seed is one account's in a database. */
let t: TestApp
let u: TestApp
beforeAll(async () => {
  t = await testApp({}, { adminToken: ADMIN_TOKEN })
  u = await testApp({}, { adminToken: ADMIN_TOKEN })
})
afterAll(async () => {
  await t.close()
  await u.close()
})

/** POST /v2/accounts to `app` with the operator's token. */
function createAccount(body: Json, app = t) {
  return client(app.app).post(
    '/v2/accounts',
    { name: 'Replay shop', ...body },
    { authorization: `Bearer ${ADMIN_TOKEN}` },
  )
}

/** A new account through POST /v2/accounts; `app` serves its clients. */
async function account(body: Json, app = t) {
  const res = await createAccount(body, app)
  expect(res.status, res.text).toBe(201)
  return { keys: res.body, sk: client(app.app, res.body.sk_test_key), skLive: client(app.app, res.body.sk_live_key) }
}

/**
 * A shop's day in test mode: a customer, a card saved to them, a charge authorized then captured,
 * a partial refund, the lists, the clock moved on an hour and a customer after it. Answers every
 * response's status and bytes, in order.
 */
async function scenario(c: Client): Promise<string[]> {
  const seen: string[] = []
  const record = async (res: Promise<{ status: number; text: string; body: Json }>) => {
    const r = await res
    seen.push(`${r.status} ${r.text}`)
    return r.body
  }
  const customer = await record(c.post('/v2/customers/', { email: 'ann@example.com', description: 'Ann' }))
  const source = await record(c.post('/v2/sources/', cardSource()))
  await record(c.post(`/v2/customers/${customer.id}/sources`, { source: source.id }))
  const charge = await record(
    c.post('/v2/charges/', {
      amount: 2500,
      currency: 'usd',
      source: source.id,
      customer: customer.id,
      capture: false,
    }),
  )
  await record(c.post(`/v2/charges/${charge.id}/capture`, {}))
  await record(c.post(`/v2/charges/${charge.id}/refund`, { amount: 1000 }))
  await record(c.get(`/v2/charges/${charge.id}`))
  await record(c.get('/v2/charges/'))
  await record(c.get('/v2/events/'))
  await record(c.get('/v2/test/clock'))
  await record(c.post('/v2/test/clock/advance', { seconds: 3600 }))
  await record(c.post('/v2/customers/', { email: 'bo@example.com', description: 'Bo' }))
  await record(c.get('/v2/customers/'))
  return seen
}

describe('a deterministic account', () => {
  it('answers the same requests in the same order with the same bytes; another seed differs', async () => {
    const [a, b, c] = [
      await account({ deterministic: true, seed: 'shop-42' }),
      // the same seed, on a service of its own, as a second run of a test suite would be
      await account({ deterministic: true, seed: 'shop-42' }, u),
      await account({ deterministic: true, seed: 'shop-43' }),
    ]
    const first = await scenario(a.sk)
    const second = await scenario(b.sk)
    expect(second).toEqual(first)
    for (const line of first) expect(line).toMatch(/^20[01] /)

    const other = await scenario(c.sk)
    expect(other).not.toEqual(first)
    // the same shape all the same: only ids differ
    expect(other.map((l) => l.replace(/_[0-9a-f]{32}/g, '_'))).toEqual(
      first.map((l) => l.replace(/_[0-9a-f]{32}/g, '_')),
    )

    // nothing of the account's own keys or secrets is in what was compared
    for (const secret of [a.keys.sk_test_key, a.keys.pk_test_key, a.keys.webhook_secret_test, a.keys.id]) {
      expect(first.join('\n')).not.toContain(secret)
    }
  })

  it('answers every scenario with the same bytes on a replay of its seed', async () => {
    const names = (await (await account({})).sk.get('/v2/test/scenarios')).body.data.map((s: Json) => s.name)
    expect(names.length).toBeGreaterThanOrEqual(11)
    const [a, b] = [
      await account({ deterministic: true, seed: 'scenario-replay' }),
      await account({ deterministic: true, seed: 'scenario-replay' }, u),
    ]
    for (const name of names) {
      const first = await a.sk.post(`/v2/test/scenarios/${name}`, {})
      const second = await b.sk.post(`/v2/test/scenarios/${name}`, {})
      expect(first.status, first.text).toBe(200)
      expect(`${name}: ${second.text}`).toBe(`${name}: ${first.text}`)
    }
  })

  it("names a scenario's own customer so that no seed makes its email look like a card number", async () => {
    // this seed's source id ends in twelve decimal digits that pass the card check
    const { sk } = await account({ deterministic: true, seed: 'rd-36191' })
    const res = await sk.post('/v2/test/scenarios/customer.source_attached', {})
    expect(res.status, res.text).toBe(200)
    expect(res.body.objects.customer.email).toMatch(/^scenario\.[a-p]{12}@example\.com$/)
  })

  it('starts its clock at 2030-01-01T00:00:00Z, holds it there, and moves it only when advanced', async () => {
    const { sk } = await account({ deterministic: true, seed: 7 })
    expect((await sk.get('/v2/test/clock')).body).toEqual({ object: 'test_clock', now: START, offset_seconds: 0 })
    const customer = (await sk.post('/v2/customers/', { email: 'a@example.com', description: 'A' })).body
    expect(customer).toMatchObject({ created_at: START, updated_at: START })
    await new Promise((r) => setTimeout(r, 1100))
    expect((await sk.get('/v2/test/clock')).body.now).toBe(START)
    // an update a second of real time later is still at the clock's time
    const updated = await sk.put(`/v2/customers/${customer.id}`, { description: 'Changed' })
    expect(updated.body.updated_at).toBe(START)

    const advanced = (await sk.post('/v2/test/clock/advance', { seconds: 90_061 })).body
    expect(advanced).toEqual({ object: 'test_clock', now: '2030-01-02T01:01:01.000000Z', offset_seconds: 90_061 })
    const later = (await sk.post('/v2/customers/', { email: 'b@example.com', description: 'B' })).body
    expect(later.created_at).toBe('2030-01-02T01:01:01.000000Z')
    // ids in the format of every id, sorting by creation
    for (const id of [customer.id, later.id]) expect(id).toMatch(/^cus_[0-9a-f]{32}$/)
    expect(later.id > customer.id).toBe(true)
    expect((await sk.get('/v2/customers/')).body.data.map((c: Json) => c.id)).toEqual([later.id, customer.id])
  })

  it("holds a charge's outcome at the clock's time however long the processor took", async () => {
    const { sk } = await account({ deterministic: true, seed: 'slow-processor' })
    const src = await sk.post('/v2/sources/', cardSource())
    const charge = await sk.post(
      '/v2/charges/',
      { amount: 1000, currency: 'usd', source: src.body.id },
      { 'jackdaw-test-fault': 'processor_latency=400' },
    )
    expect(charge.body).toMatchObject({ status: 'succeeded', created_at: START, updated_at: START })
    expect((await sk.get('/v2/events/')).body.data[0]).toMatchObject({ type: 'charge.succeeded', created_at: START })
  })

  it("gives a payer's step the same hosted-page address on a replay", async () => {
    const pending = async (c: Client) => {
      const src = await c.post('/v2/sources/', { ...cardSource({ number: '4000000000003220' }), redirect: REDIRECT })
      return c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    }
    const a = await pending((await account({ deterministic: true, seed: 'payer-step' })).sk)
    const b = await pending((await account({ deterministic: true, seed: 'payer-step' }, u)).sk)
    expect(a.body.status).toBe('pending')
    const page = new URL(a.body.source.action.url)
    expect(page.pathname).toBe(`/v2/hosted/charges/${a.body.id}`)
    expect(page.searchParams.get('token')).toMatch(/^[0-9a-f]{48}$/)
    expect(b.text).toBe(a.text)
    // and the page opens with it
    expect((await client(t.app).get(page.pathname + page.search)).status).toBe(200)
  })

  it('reads an integer seed as its decimal text', async () => {
    const byNumber = await account({ deterministic: true, seed: 12345 })
    const byText = await account({ deterministic: true, seed: '12345' }, u)
    const made = async (c: Client) =>
      (await c.post('/v2/customers/', { email: 'a@example.com', description: 'A' })).text
    expect(await made(byNumber.sk)).toBe(await made(byText.sk))
  })

  it('counts its ids in the database: a second process goes on where the first left off', async () => {
    const twin = await u.twin()
    try {
      const one = await account({ deterministic: true, seed: 'counted' })
      const split = await account({ deterministic: true, seed: 'counted' }, u)
      const splitTwin = client(twin.app, split.keys.sk_test_key)
      const make = async (c: Client, email: string) =>
        (await c.post('/v2/customers/', { email, description: 'X' })).body.id as string
      const inOne = [
        await make(one.sk, 'a@example.com'),
        await make(one.sk, 'b@example.com'),
        await make(one.sk, 'c@example.com'),
      ]
      const acrossTwo = [
        await make(split.sk, 'a@example.com'),
        await make(splitTwin, 'b@example.com'),
        await make(split.sk, 'c@example.com'),
      ]
      expect(acrossTwo).toEqual(inOne)
      expect([...inOne].sort()).toEqual(inOne)
    } finally {
      await twin.close()
    }
  })

  it('keeps live mode on the real time and random ids', async () => {
    const { skLive, sk } = await account({ deterministic: true, seed: 'live-too' })
    const live = (await skLive.post('/v2/customers/', { email: 'a@example.com', description: 'A' })).body
    expect(Math.abs(Date.parse(live.created_at) - Date.now())).toBeLessThan(60_000)
    const test = (await sk.post('/v2/customers/', { email: 'a@example.com', description: 'A' })).body
    expect(test.created_at).toBe(START)
    // an account made without it is not deterministic
    const plain = await account({})
    expect((await plain.sk.get('/v2/test/clock')).body.now).not.toBe(START)
  })
})

describe('POST /v2/accounts with a bad seed', () => {
  it('answers 422 in the error envelope and makes no account', async () => {
    await account({ deterministic: true, seed: 'taken' })
    const before = Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM accounts')).rows[0]?.n)
    for (const [body, code] of [
      [{ deterministic: true }, 'parameter_missing'],
      [{ seed: 'abc' }, 'parameter_invalid'],
      [{ deterministic: false, seed: 'abc' }, 'parameter_invalid'],
      [{ deterministic: true, seed: '' }, 'parameter_invalid'],
      [{ deterministic: true, seed: 'x'.repeat(101) }, 'parameter_invalid'],
      [{ deterministic: true, seed: -1 }, 'parameter_invalid'],
      [{ deterministic: true, seed: 1.5 }, 'parameter_invalid'],
      [{ deterministic: true, seed: { a: 1 } }, 'parameter_invalid'],
      [{ deterministic: true, seed: 2 ** 60 }, 'parameter_invalid'],
      [{ deterministic: 'yes', seed: 'abc' }, 'parameter_invalid'],
      // another account's seed would make ids that are taken
      [{ deterministic: true, seed: 'taken' }, 'parameter_invalid'],
    ] as const) {
      const res = await createAccount({ name: 'Bad seed', ...body })
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body.error, JSON.stringify(body)).toMatchObject({ code, type: 'invalid_request_error' })
      expect(res.body.error.param, JSON.stringify(body)).toMatch(/^(seed|deterministic)$/)
      // every 422 lists its problems, as the schema's own refusals do
      expect(res.body.error.detail, JSON.stringify(body)).toEqual([
        expect.objectContaining({ loc: ['body', res.body.error.param], msg: expect.any(String) }),
      ])
    }
    const after = Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM accounts')).rows[0]?.n)
    expect(after).toBe(before)
  })

  it('shows deterministic and seed in the OpenAPI document', async () => {
    const doc = (await t.anon.get('/v2/openapi.json')).body
    const op = doc.paths['/v2/accounts'].post
    expect(op.tags).toEqual(['test-mode'])
    const schema = op.requestBody.content['application/json'].schema
    expect(schema.properties.deterministic.type).toBe('boolean')
    expect(schema.properties.seed.anyOf.map((s: Json) => s.type).sort()).toEqual(['integer', 'string'])
  })
})
