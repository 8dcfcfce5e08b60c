import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAULT_OPERATIONS } from '../../src/schemas/test-faults.js'
import { RULES_CACHE_MS } from '../../src/services/test-faults.js'
import { basic, type Client, cardSource, client, type Json, type TestApp, testApp } from '../helpers/app.js'

let t: TestApp
/** a second account on the same store */
let otherShop: Client
beforeAll(async () => {
  t = await testApp()
  otherShop = client(t.app, (await t.app.services.accounts.create('Other shop')).sk_test_key)
})
afterAll(() => t.close())

/** The account's rules as the store keeps them; undefined when it keeps none. */
async function storedRules(): Promise<Json> {
  const res = await t.db.query('SELECT rules FROM test_faults WHERE account_id = $1', [t.account.id])
  return res.rows[0]?.rules
}

const setRules = (rules: unknown, c: Client = t.sk) => c.put('/v2/test/faults', { rules })

async function charges(n: number, c: Client = t.sk): Promise<Json[]> {
  const made: Json[] = []
  for (let i = 0; i < n; i++) {
    const src = await c.post('/v2/sources/', cardSource())
    made.push((await c.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.body.id })).body)
  }
  return made
}

async function storedStatuses(ids: string[]): Promise<string[]> {
  const res = await t.db.query<{ status: string }>('SELECT status FROM charges WHERE id = ANY($1::text[])', [ids])
  return res.rows.map((r) => r.status)
}

describe('the fault rules', () => {
  it('are not there for a live key: GET and PUT /v2/test/faults answer 404', async () => {
    const read = await t.skLive.get('/v2/test/faults')
    expect(read.status).toBe(404)
    expect(read.body.error.code).toBe('route_missing')
    const write = await setRules([{ operation: 'charges.create', fault: 'rate_limited' }], t.skLive)
    expect(write.status).toBe(404)
    expect(write.body.error.code).toBe('route_missing')
    // whatever it sends: a body or query the route would refuse tells nothing of it either
    for (const res of [
      await t.skLive.put('/v2/test/faults', { rules: 5 }),
      await t.skLive.get('/v2/test/faults?x=1'),
    ]) {
      expect(res.status, res.text).toBe(404)
      expect(res.body.error.code).toBe('route_missing')
    }
    expect(await storedRules()).toBeUndefined()
  })

  it('start empty, are replaced by PUT and read back by GET, kept in the store, for one account only', async () => {
    expect((await t.sk.get('/v2/test/faults')).body).toEqual({ object: 'test_faults', rules: [] })
    const rules = [
      { operation: 'charges.capture', fault: 'processor_latency', latency_ms: 50, rate: 0.25 },
      { notify: 'delay', seconds: 30 },
    ]
    const put = await setRules(rules)
    expect(put.status).toBe(200)
    expect(put.body).toEqual({ object: 'test_faults', rules })
    expect((await t.sk.get('/v2/test/faults')).body).toEqual({ object: 'test_faults', rules })
    expect(await storedRules()).toEqual(rules)
    expect((await otherShop.get('/v2/test/faults')).body.rules).toEqual([])

    // a second process reads the same rules
    const twin = await t.twin()
    try {
      expect((await twin.sk.get('/v2/test/faults')).body.rules).toEqual(rules)
    } finally {
      await twin.close()
    }

    const replaced = [{ operation: 'customers.create', fault: 'error_before_commit' }]
    expect((await setRules(replaced)).body.rules).toEqual(replaced)
    expect(await storedRules()).toEqual(replaced)
    expect((await setRules([])).body.rules).toEqual([])
    expect(await storedRules()).toBeUndefined()
  })

  it.each([
    ['an unknown fault', 'parameter_invalid', [{ operation: 'charges.create', fault: 'meteor' }]],
    ['an unknown operation', 'parameter_invalid', [{ operation: 'charges.explode', fault: 'rate_limited' }]],
    ['a rate above 1', 'parameter_invalid', [{ operation: 'charges.create', fault: 'rate_limited', rate: 1.5 }]],
    ['a rate below 0', 'parameter_invalid', [{ operation: 'charges.create', fault: 'rate_limited', rate: -0.1 }]],
    ['a rate as text', 'parameter_invalid', [{ operation: 'charges.create', fault: 'rate_limited', rate: 'half' }]],
    ['an operation without a fault', 'parameter_missing', [{ operation: 'charges.create' }]],
    ['neither operation nor notify', 'parameter_missing', [{ fault: 'rate_limited' }]],
    [
      'both operation and notify',
      'parameter_invalid',
      [{ operation: 'charges.create', fault: 'rate_limited', notify: 'duplicate' }],
    ],
    [
      'a processor fault where no processor is called',
      'parameter_invalid',
      [{ operation: 'sources.create', fault: 'processor_timeout' }],
    ],
    [
      'processor_latency without latency_ms',
      'parameter_missing',
      [{ operation: 'charges.create', fault: 'processor_latency' }],
    ],
    [
      'a latency past 30 s',
      'parameter_invalid',
      [{ operation: 'charges.create', fault: 'processor_latency', latency_ms: 30_001 }],
    ],
    ['an unknown notify fault', 'parameter_invalid', [{ notify: 'scramble' }]],
    ['delay without seconds', 'parameter_missing', [{ notify: 'delay' }]],
    ['a field of no rule', 'parameter_unknown', [{ notify: 'duplicate', color: 'red' }]],
    ['rules that are not a list', 'parameter_invalid', { operation: 'charges.create' }],
  ])('refuse %s with a 422 %s, and keep the rules as they were', async (_what, code, rules) => {
    const kept = [{ operation: 'charges.void', fault: 'rate_limited', rate: 0.5 }]
    await setRules(kept)
    const res = await setRules(rules)
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code })
    expect(res.body.error.param).toMatch(/^rules/)
    // the rule at fault is named by its index, whether the schema or the rules between fields refused it
    const loc = res.body.error.detail[0].loc
    expect(loc.slice(0, 3)).toEqual(Array.isArray(rules) ? ['body', 'rules', 0] : ['body', 'rules'])
    expect(await storedRules()).toEqual(kept)
    await setRules([])
  })

  it('take at most 20: 21 rules are refused with a 422, and the 20 already set stay', async () => {
    const twenty = Array.from({ length: 20 }, (_, i) => ({
      operation: 'charges.void',
      fault: 'rate_limited',
      rate: i / 20,
    }))
    expect((await setRules(twenty)).status).toBe(200)
    const res = await setRules([...twenty, { notify: 'duplicate' }])
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'rules' })
    expect(res.body.error.message).toContain('20')
    expect((await t.sk.get('/v2/test/faults')).body.rules).toEqual(twenty)
    expect(await storedRules()).toEqual(twenty)
    await setRules([])
  })

  it('rate 1 fails every charges.create as the fault says, rate 0 none, other accounts none', async () => {
    await setRules([{ operation: 'charges.create', fault: 'processor_unavailable', rate: 1 }])
    const failed = await charges(5)
    expect(failed.map((c) => c.status)).toEqual(Array(5).fill('failed'))
    expect(failed.map((c) => c.failure_data.code)).toEqual(Array(5).fill('processor_unavailable'))
    expect(await storedStatuses(failed.map((c) => c.id))).toEqual(Array(5).fill('failed'))
    expect((await charges(1, otherShop))[0].status).toBe('succeeded')

    await setRules([{ operation: 'charges.create', fault: 'processor_unavailable', rate: 0 }])
    const fine = await charges(5)
    expect(fine.map((c) => c.status)).toEqual(Array(5).fill('succeeded'))
    expect(await storedStatuses(fine.map((c) => c.id))).toEqual(Array(5).fill('succeeded'))
    await setRules([])
  })

  it('a rate between draws some calls and not others', async () => {
    await setRules([{ operation: 'customers.create', fault: 'rate_limited', rate: 0.5 }])
    const statuses: number[] = []
    for (let i = 0; i < 40; i++)
      statuses.push(
        (await t.sk.post('/v2/customers/', { email: `c${i}@shop.example`, description: 'A customer' })).status,
      )
    const limited = statuses.filter((s) => s === 429).length
    // each of 40 calls fails with even odds: all or none of them would be 1 chance in 2^39
    expect(limited).toBeGreaterThan(0)
    expect(limited).toBeLessThan(40)
    const kept = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM customers WHERE account_id = $1', [
      t.account.id,
    ])
    expect(kept.rows[0]?.n).toBe(40 - limited)
    await setRules([])
  })

  it('set through one process, apply in another within RULES_CACHE_MS', async () => {
    const twin = await t.twin()
    try {
      const customer = (c: Client) =>
        c.post('/v2/customers/', { email: 'twin@shop.example', description: 'A customer' })
      expect((await customer(twin.sk)).status).toBe(201)
      await setRules([{ operation: 'customers.create', fault: 'rate_limited' }])
      // the process that took the change applies it at once
      expect((await customer(t.sk)).status).toBe(429)
      await new Promise((r) => setTimeout(r, RULES_CACHE_MS + 100))
      expect((await customer(twin.sk)).status).toBe(429)
      await setRules([])
      await new Promise((r) => setTimeout(r, RULES_CACHE_MS + 100))
      expect((await customer(twin.sk)).status).toBe(201)
    } finally {
      await twin.close()
    }
  })

  it('a rule acts on its operation only, and the header of a request goes before the rules', async () => {
    await setRules([{ operation: 'sources.create', fault: 'error_before_commit' }])
    const src = await t.sk.post('/v2/sources/', cardSource())
    expect(src.status).toBe(500)
    expect(src.body.error.code).toBe('internal_error')
    expect((await t.sk.post('/v2/customers/', { email: 'fine@shop.example', description: 'A customer' })).status).toBe(
      201,
    )
    const limited = await t.sk.post('/v2/sources/', cardSource(), { 'Jackdaw-Test-Fault': 'rate_limited' })
    expect(limited.status).toBe(429)
    await setRules([])
    expect((await t.sk.post('/v2/sources/', cardSource())).status).toBe(200)

    // an operation on one object, named by its route
    const [made] = await charges(1)
    await setRules([{ operation: 'charges.retrieve', fault: 'rate_limited' }])
    expect((await t.sk.get(`/v2/charges/${made.id}`)).status).toBe(429)
    expect((await t.sk.get('/v2/charges/')).status).toBe(200)
    await setRules([])
  })
})

describe('lost_response by a rule', () => {
  it('{"operation": "customers.create", "fault": "lost_response"}: the customer is made, the connection closes, a retry with its key finds it', async () => {
    // the connection is lost on a real socket only
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
    await setRules([{ operation: 'customers.create', fault: 'lost_response' }])
    const email = 'lost@shop.example'
    const send = () =>
      fetch(`${url}/v2/customers/`, {
        method: 'POST',
        body: JSON.stringify({ email, description: 'A customer' }),
        headers: {
          authorization: basic(t.account.sk_test_key),
          'content-type': 'application/json',
          'idempotency-key': 'lost-customer',
        },
      })
    const customers = async () =>
      (
        await t.db.query<{ id: string }>('SELECT id FROM customers WHERE account_id = $1 AND email = $2', [
          t.account.id,
          email,
        ])
      ).rows
    const lost = await send().then(
      (res) => res.status,
      (err: Error) => err,
    )
    expect(lost).toBeInstanceOf(Error)
    expect(await customers()).toHaveLength(1)

    await setRules([])
    const retry = await send()
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    const found = (await retry.json()) as Json
    expect(await customers()).toEqual([{ id: found.id }])
  })
})

describe('the operations a rule may name', () => {
  it('are each an operation of the OpenAPI document', async () => {
    const doc = (await t.anon.get('/v2/openapi.json')).body
    for (const [operation, route] of Object.entries(FAULT_OPERATIONS)) {
      const [method = '', url = ''] = route.split(' ')
      const path = url.replace(/:(\w+)/g, '{$1}')
      expect(doc.paths[path]?.[method.toLowerCase()], operation).toBeDefined()
    }
  })

  // ids of nothing: the rule answers before the object is looked for
  const NOTHING: Record<string, string> = {
    ch_id: `ch_${'0'.repeat(32)}`,
    src_id: `src_${'0'.repeat(32)}`,
    cus_id: `cus_${'0'.repeat(32)}`,
    dlv_id: `dlv_${'0'.repeat(32)}`,
  }
  it.each(Object.entries(FAULT_OPERATIONS))(
    '%s (%s) answers 429 with Retry-After: 1 under a rate_limited rule',
    async (operation, route) => {
      const [method = '', path = ''] = route.split(' ')
      const url = path.replace(/:(\w+)/g, (_, param: string) => NOTHING[param] ?? '')
      const send = () =>
        method === 'GET'
          ? t.sk.get(url)
          : method === 'DELETE'
            ? t.sk.delete(url)
            : method === 'PUT'
              ? t.sk.put(url, { description: 'A customer' })
              : t.sk.post(url, {})
      await setRules([{ operation, fault: 'rate_limited' }])
      const res = await send()
      expect(res.status, res.text).toBe(429)
      expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' })
      expect(res.headers['retry-after']).toBe('1')
      await setRules([])
      // without the rule the same request is not limited
      expect((await send()).status).not.toBe(429)
    },
  )
})

describe('a public test key', () => {
  it('is refused (403 secret_key_required) by the rules, the clock advance and a scenario run, and changes nothing', async () => {
    const charged = async () =>
      (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM charges WHERE account_id = $1', [t.account.id]))
        .rows[0]?.n
    const before = await charged()
    for (const res of [
      await t.pk.put('/v2/test/faults', { rules: [{ operation: 'charges.create', fault: 'rate_limited' }] }),
      await t.pk.get('/v2/test/faults'),
      await t.pk.post('/v2/test/clock/advance', { seconds: 60 }),
      await t.pk.post('/v2/test/scenarios/charge.succeeded', {}),
    ]) {
      expect(res.status, res.text).toBe(403)
      expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'secret_key_required' })
    }
    expect(await storedRules()).toBeUndefined()
    expect((await t.sk.get('/v2/test/clock')).body.offset_seconds).toBe(0)
    expect(await charged()).toBe(before)
  })
})

describe('an account removed', () => {
  it('takes its rules with it', async () => {
    const shop = await t.app.services.accounts.create('Short-lived shop')
    const c = client(t.app, shop.sk_test_key)
    expect((await setRules([{ notify: 'duplicate' }], c)).status).toBe(200)
    const count = async () =>
      (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM test_faults WHERE account_id = $1', [shop.id]))
        .rows[0]?.n
    expect(await count()).toBe(1)
    await t.app.services.accounts.remove(shop.id)
    expect(await count()).toBe(0)
  })
})

describe('the OpenAPI document', () => {
  it('lists the rules under test-mode with their errors, and the header on the operations of an account', async () => {
    const doc = (await t.anon.get('/v2/openapi.json')).body
    const { get, put } = doc.paths['/v2/test/faults']
    for (const op of [get, put]) {
      expect(op.tags).toEqual(['test-mode'])
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '4XX', '5XX']))
    }
    const rule = put.requestBody.content['application/json'].schema.properties.rules.items
    expect(rule.properties.rate).toMatchObject({ minimum: 0, maximum: 1 })
    expect(rule.properties.operation.enum).toContain('charges.create')
    expect(rule.properties.fault.enum).toContain('lost_response')
    expect(rule.properties.notify.enum).toEqual(['delay', 'duplicate', 'reorder'])
    const header = (op: Json) => op.parameters?.find((p: Json) => p.name === 'Jackdaw-Test-Fault')
    expect(header(doc.paths['/v2/charges/'].post)).toMatchObject({ in: 'header', required: false })
    expect(header(doc.paths['/v2/charges/{ch_id}'].get)).toBeDefined()
    expect(header(doc.paths['/v2/accounts'].post)).toBeUndefined()
    const pattern = new RegExp(header(doc.paths['/v2/charges/'].post).schema.pattern)
    expect(pattern.test('processor_latency=250')).toBe(true)
    expect(pattern.test('lost_response')).toBe(true)
    expect(pattern.test('meteor')).toBe(false)
  })
})
