import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NewAccountKeys } from '../../src/schemas/account.js'
import { type Client, cardSource, client, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { shapeProblems } from '../helpers/shape.js'

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789'

const t = {} as TestApp & { admin: Client }
beforeAll(async () => {
  Object.assign(t, await testApp({}, { adminToken: ADMIN_TOKEN }))
  t.admin = bearer(ADMIN_TOKEN)
})
afterAll(() => t.close())

/** A client of the test app that sends `token` as a Bearer token. */
function bearer(token: string): Client {
  const c = client(t.app)
  const auth = { authorization: `Bearer ${token}` }
  return {
    get: (p, h) => c.get(p, { ...auth, ...h }),
    post: (p, b, h) => c.post(p, b, { ...auth, ...h }),
    put: (p, b, h) => c.put(p, b, { ...auth, ...h }),
    delete: (p, h) => c.delete(p, { ...auth, ...h }),
  }
}

async function countRows(table: string, accountId: string): Promise<number> {
  const res = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [accountId])
  return Number(res.rows[0]?.n)
}

describe('POST /v2/accounts', () => {
  it('makes an account whose keys and webhook secrets work at once', async () => {
    const res = await t.admin.post('/v2/accounts', { name: 'Corner Shop' })
    expect(res.status).toBe(201)
    expect(shapeProblems(NewAccountKeys, res.body)).toEqual([])
    expect(res.body.id).toMatch(/^acct_/)
    expect(res.body.name).toBe('Corner Shop')
    expect(res.body.sk_test_key).toMatch(/^sk_test_/)
    expect(res.body.pk_live_key).toMatch(/^pk_live_/)
    const me = await client(t.app, res.body.sk_test_key).get('/v2/me')
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({
      id: res.body.id,
      name: 'Corner Shop',
      webhook_secret: res.body.webhook_secret_test,
    })
    const live = await client(t.app, res.body.sk_live_key).get('/v2/me')
    expect(live.body).toMatchObject({ id: res.body.id, livemode: true, webhook_secret: res.body.webhook_secret_live })
  })

  it('refuses a missing, empty, over-long or extra field in the documented envelope', async () => {
    for (const [body, code] of [
      [{}, 'parameter_missing'],
      [{ name: '' }, 'parameter_invalid'],
      [{ name: 'x'.repeat(101) }, 'parameter_invalid'],
      [{ name: 'Shop', plan: 'gold' }, 'parameter_unknown'],
    ] as const) {
      const res = await t.admin.post('/v2/accounts', body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body.error.code).toBe(code)
    }
  })

  it('answers 401 to no token, a wrong token and any account key, live or test, and makes nothing', async () => {
    const before = await t.db.query('SELECT count(*)::int AS n FROM accounts')
    const refusals = [
      [client(t.app), 'authentication_required'],
      [bearer(`${ADMIN_TOKEN}x`), 'admin_token_invalid'],
      [bearer(ADMIN_TOKEN.slice(0, -1)), 'admin_token_invalid'],
      [t.sk, 'admin_token_invalid'],
      [t.skLive, 'admin_token_invalid'],
    ] as const
    for (const [who, code] of refusals) {
      const made = await who.post('/v2/accounts', { name: 'Intruder' })
      expect(made.status).toBe(401)
      expect(made.body.error.code).toBe(code)
      const removed = await who.delete(`/v2/accounts/${t.account.id}`)
      expect(removed.status).toBe(401)
    }
    // the token with another beside it: which one was meant is never guessed
    const headers: Record<string, string[]> = {
      authorization: [`Bearer ${ADMIN_TOKEN}`, `Bearer ${ADMIN_TOKEN}x`],
      'content-type': ['application/json'],
    }
    const twice = await t.app.inject({ method: 'POST', url: '/v2/accounts', headers, payload: '{"name":"Intruder"}' })
    expect(twice.statusCode, twice.body).toBe(400)
    expect(JSON.parse(twice.body).error).toMatchObject({ code: 'header_invalid', param: 'Authorization' })
    // the token is checked before the body: a wrong token with a bad body is still a 401
    expect((await bearer('nope-nope-nope-nope').post('/v2/accounts', '{"name":')).status).toBe(401)
    const after = await t.db.query('SELECT count(*)::int AS n FROM accounts')
    expect(after.rows).toEqual(before.rows)
    expect((await t.sk.get('/v2/me')).status).toBe(200)
  })
})

describe('DELETE /v2/accounts/:id', () => {
  it('removes the account and everything of it, and leaves other accounts alone', async () => {
    const made = (await t.admin.post('/v2/accounts', { name: 'Doomed Shop' })).body
    const doomed = client(t.app, made.sk_test_key)
    const customer = await doomed.post('/v2/customers/', { email: 'ann@example.com', description: 'Ann' })
    expect(customer.status).toBe(201)
    const source = await doomed.post(
      '/v2/sources/',
      { ...cardSource(), redirect: { ...REDIRECT, notify: 'https://shop.example/notify' } },
      { 'Idempotency-Key': 'src-1' },
    )
    expect(source.status).toBe(200)
    const charge = await doomed.post('/v2/charges/', { amount: 1000, currency: 'usd', source: source.body.id })
    expect(charge.status).toBe(201)
    expect((await doomed.post(`/v2/charges/${charge.body.id}/refund`, { amount: 100 })).status).toBe(200)
    // another account's objects, which must stay
    const kept = await t.sk.post('/v2/customers/', { email: 'bob@example.com', description: 'Bob' })
    const tables = ['customers', 'sources', 'charges', 'events', 'deliveries', 'idempotency_keys', 'api_keys']
    for (const table of tables) expect(await countRows(table, made.id), table).toBeGreaterThan(0)

    // a field it does not take is refused, and removes nothing
    const refused = await t.app.inject({
      method: 'DELETE',
      url: `/v2/accounts/${made.id}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: '{"cascade":true}',
    })
    expect(refused.statusCode).toBe(422)
    expect(refused.json().error).toMatchObject({ code: 'parameter_unknown', param: 'cascade' })
    for (const table of tables) expect(await countRows(table, made.id), table).toBeGreaterThan(0)

    const res = await t.admin.delete(`/v2/accounts/${made.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: made.id, object: 'account', deleted: true })
    for (const table of tables) expect(await countRows(table, made.id), table).toBe(0)
    const refunds = await t.db.query('SELECT count(*)::int AS n FROM refunds WHERE charge_id = $1', [charge.body.id])
    expect(refunds.rows[0]).toEqual({ n: 0 })
    expect((await t.db.query('SELECT 1 FROM accounts WHERE id = $1', [made.id])).rowCount).toBe(0)
    // its keys stop working at once; the other account's objects are there
    expect((await doomed.get('/v2/me')).status).toBe(401)
    expect((await t.sk.get(`/v2/customers/${kept.body.id}`)).status).toBe(200)
    // a second removal finds nothing
    const again = await t.admin.delete(`/v2/accounts/${made.id}`)
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe('resource_missing')
  })
})

describe('an account removed while another process still trusts its keys', () => {
  it('answers that process 401 for every write, never a 500', async () => {
    const made = (await t.admin.post('/v2/accounts', { name: 'Gone Shop' })).body
    const twin = await t.twin()
    try {
      const sk = client(twin.app, made.sk_test_key)
      const pk = client(twin.app, made.pk_test_key)
      // the other process has looked the keys up, and trusts them for a few seconds
      expect((await sk.get('/v2/me')).status).toBe(200)
      expect((await pk.post('/v2/sources/', cardSource())).status).toBe(200)
      expect((await t.admin.delete(`/v2/accounts/${made.id}`)).status).toBe(200)
      for (const res of [
        await sk.post('/v2/customers/', { email: 'gone@example.com', description: 'Gone' }),
        await sk.post('/v2/sources/', cardSource()),
        await pk.post('/v2/sources/', cardSource()),
        await sk.post(
          '/v2/customers/',
          { email: 'gone@example.com', description: 'Gone' },
          { 'Idempotency-Key': 'gone-1' },
        ),
      ]) {
        expect(res.status, res.text).toBe(401)
        expect(res.body.error.code).toBe('api_key_invalid')
      }
      expect(twin.logs.join('')).not.toContain('unhandled error')
    } finally {
      await twin.close()
    }
  })
})

describe('without an admin token configured', () => {
  it('answers 404 to both operations, whatever the token', async () => {
    const plain = await testApp()
    try {
      const c = client(plain.app)
      const made = await c.post('/v2/accounts', { name: 'Shop' }, { authorization: 'Bearer anything-at-all-1234' })
      expect(made.status).toBe(404)
      expect(made.body.error.code).toBe('route_missing')
      const removed = await client(plain.app, plain.account.sk_test_key).delete(`/v2/accounts/${plain.account.id}`)
      expect(removed.status).toBe(404)
      expect((await plain.sk.get('/v2/me')).status).toBe(200)
    } finally {
      await plain.close()
    }
  })
})

describe('the OpenAPI document', () => {
  it('lists both operations under the test-mode tag, with the Bearer scheme and without Idempotency-Key', async () => {
    const doc = (await client(t.app).get('/v2/openapi.json')).body
    const post = doc.paths['/v2/accounts'].post
    const del = doc.paths['/v2/accounts/{acct_id}'].delete
    for (const op of [post, del]) {
      expect(op.tags).toEqual(['test-mode'])
      expect(op.security).toEqual([{ bearerAuth: [] }])
    }
    expect(Object.keys(post.responses)).toContain('201')
    expect((post.parameters ?? []).some((p: { name: string }) => p.name === 'Idempotency-Key')).toBe(false)
  })
})
