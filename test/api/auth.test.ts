import { describe, expect, it } from 'vitest'
import { basic, cardSource, client, REDIRECT, type Reply } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { customerCount, newCustomer, newSource, other, otherSk, t, useAccountsApp } from './auth-harness.js'

/**
 * Keys and accounts through HTTP: who may call what with which key, and the account of a key.
 * What another account or another mode sees is in auth-isolation.test.ts; the shape every answer
 * has in every-answer.test.ts.
 */

useAccountsApp()

describe('authentication', () => {
  it('no key is 401 authentication_required, on every kind of route', async () => {
    for (const res of [
      await t.anon.get('/v2/me'),
      await t.anon.post('/v2/sources/', cardSource()),
      await t.anon.get('/v2/sources/src_00000000000000000000000000000000'),
      await t.anon.get('/v2/customers/'),
      await t.anon.post('/v2/customers/', { email: 'a@example.com', description: 'x' }),
    ]) {
      expectError(res, 401, 'authentication_required')
      expect(res.body.error.type).toBe('authentication_error')
    }
  })

  it('an Authorization header without a usable scheme is 401', async () => {
    for (const authorization of [
      t.account.sk_test_key,
      `Token ${t.account.sk_test_key}`,
      'Bearer ',
      'Basic ',
      `Basic ${Buffer.from(`:${t.account.sk_test_key}`).toString('base64')}`,
    ]) {
      const res = await t.anon.get('/v2/me', { authorization })
      expect(res.status, authorization).toBe(401)
      expect(res.body.error.type).toBe('authentication_error')
    }
  })

  it('an unknown or malformed key is 401 api_key_invalid', async () => {
    const unknown = [
      `sk_test_${'a'.repeat(32)}`,
      `pk_live_${'B'.repeat(32)}`,
      'hello',
      'sk_test_short',
      `${t.account.sk_test_key}x`,
      t.account.sk_test_key.slice(0, -1),
      t.account.sk_test_key.toUpperCase(),
      t.account.webhook_secret_test,
    ]
    for (const key of unknown) {
      expectError(await t.anon.get('/v2/me', { authorization: `Bearer ${key}` }), 401, 'api_key_invalid')
      expectError(await t.anon.get('/v2/me', { authorization: basic(key) }), 401, 'api_key_invalid')
    }
    expectError(await client(t.app, 'sk_test_nope').post('/v2/sources/', cardSource()), 401, 'api_key_invalid')
  })

  it('Basic (key as user name, empty password) and Bearer both work', async () => {
    for (const authorization of [
      basic(t.account.sk_test_key),
      `Bearer ${t.account.sk_test_key}`,
      `bearer ${t.account.sk_test_key}`,
      `BASIC ${Buffer.from(`${t.account.sk_test_key}:`).toString('base64')}`,
    ]) {
      const res = await t.anon.get('/v2/me', { authorization })
      expect(res.status, authorization).toBe(200)
      expect(res.body.id).toBe(t.account.id)
    }
    const viaBearer = await t.anon.post('/v2/sources/', cardSource(), {
      authorization: `Bearer ${t.account.pk_live_key}`,
    })
    expect(viaBearer.status).toBe(200)
    expect(viaBearer.body.livemode).toBe(true)
  })

  it('secret keys are not stored in plain text', async () => {
    const rows = [
      ...(await t.db.query('SELECT row_to_json(x)::text AS j FROM api_keys x')).rows,
      ...(await t.db.query('SELECT row_to_json(x)::text AS j FROM accounts x')).rows,
    ].map((r) => String((r as { j: string }).j))
    expect(rows.length).toBeGreaterThan(2)
    for (const secret of [t.account.sk_test_key, t.account.sk_live_key, other.sk_test_key]) {
      for (const row of rows) expect(row).not.toContain(secret)
    }
  })
})

describe('public and secret keys', () => {
  it('a public key on a secret-only operation is 403 secret_key_required, and does nothing', async () => {
    const cus = await newCustomer()
    const src = await newSource()
    const before = await customerCount()
    for (const pk of [t.pk, t.pkLive]) {
      const calls: Reply[] = [
        await pk.post('/v2/customers/', { email: 'pk@example.com', description: 'by a public key' }),
        await pk.get('/v2/customers/'),
        await pk.get(`/v2/customers/${cus}`),
        await pk.put(`/v2/customers/${cus}`, { description: 'changed' }),
        await pk.delete(`/v2/customers/${cus}`),
        await pk.get('/v2/customers/by_email/ann@example.com'),
        await pk.post(`/v2/customers/${cus}/sources`, { source: src }),
        await pk.delete(`/v2/customers/${cus}/sources/${src}`),
        await pk.get('/v2/me'),
        await pk.post('/v2/me/webhook_secret/roll'),
      ]
      for (const res of calls) {
        expectError(res, 403, 'secret_key_required')
        expect(res.body.error.type).toBe('permission_error')
      }
    }
    expect(await customerCount()).toBe(before)
    const still = await t.sk.get(`/v2/customers/${cus}`)
    expect(still.body.description).toBe('a customer')
    expect(still.body.sources).toEqual([])
    expect((await t.sk.get(`/v2/sources/${src}`)).body.used).toBe(false)
  })

  it('a public key creates and retrieves sources, of its own mode', async () => {
    const created = await t.pk.post('/v2/sources/', cardSource())
    expect(created.status).toBe(200)
    expect(created.body.livemode).toBe(false)
    expect((await t.pk.get(`/v2/sources/${created.body.id}`)).body).toEqual(created.body)
    expect((await t.sk.get(`/v2/sources/${created.body.id}`)).body).toEqual(created.body)

    const bySecret = await newSource(t.sk)
    expect((await t.pk.get(`/v2/sources/${bySecret}`)).status).toBe(200)

    const live = await t.pkLive.post('/v2/sources/', { type: 'wallet_b', redirect: REDIRECT })
    expect(live.status).toBe(200)
    expect(live.body.livemode).toBe(true)
    expect((await t.skLive.get(`/v2/sources/${live.body.id}`)).status).toBe(200)
  })
})

describe('GET /v2/me', () => {
  it('returns the account of the key: id, name and both public keys', async () => {
    const res = await t.sk.get('/v2/me')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      object: 'account',
      id: t.account.id,
      name: 'Test account',
      pk_test_key: t.account.pk_test_key,
      pk_live_key: t.account.pk_live_key,
      livemode: false,
    })
    expect(res.body.id).toMatch(/^acct_[0-9a-f]{32}$/)
    expect(res.text).not.toContain(t.account.sk_test_key)
    expect(res.text).not.toContain(t.account.sk_live_key)

    const live = await t.skLive.get('/v2/me')
    expect(live.body).toMatchObject({ id: t.account.id, livemode: true, pk_live_key: t.account.pk_live_key })

    const theirs = await otherSk.get('/v2/me')
    expect(theirs.body).toMatchObject({ id: other.id, name: 'Other', pk_test_key: other.pk_test_key })
  })
})

describe('a header sent twice', () => {
  const twice = async (headers: Record<string, string[]>, method: 'GET' | 'POST', url: string) => {
    const res = await t.app.inject({
      method,
      url,
      headers: { 'content-type': 'application/json', ...headers },
      ...(method === 'POST' ? { payload: JSON.stringify({ email: 'twice@example.com', description: 'Twice' }) } : {}),
    })
    return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers, text: res.body } as Reply
  }

  it('two Authorization headers that differ are 400 header_invalid, whichever comes first', async () => {
    const sk = basic(t.account.sk_test_key)
    const pk = basic(t.account.pk_test_key)
    for (const pair of [
      [sk, pk],
      [pk, sk],
      [sk, `Bearer sk_test_${'b'.repeat(32)}`],
    ]) {
      const res = await twice({ authorization: pair }, 'GET', '/v2/charges/?limit=1')
      expectError(res, 400, 'header_invalid')
      expect(res.body.error.param).toBe('Authorization')
    }
    // the same key twice, in either scheme, says nothing else
    expect((await twice({ authorization: [sk, sk] }, 'GET', '/v2/charges/?limit=1')).status).toBe(200)
    const bearer = `Bearer ${t.account.sk_test_key}`
    expect((await twice({ authorization: [sk, bearer] }, 'GET', '/v2/charges/?limit=1')).status).toBe(200)
  })

  it('two Idempotency-Keys that differ are 400 header_invalid, and nothing is made', async () => {
    const before = await customerCount()
    const auth = [basic(t.account.sk_test_key)]
    for (const name of ['idempotency-key', 'x-idempotency-key']) {
      const res = await twice({ authorization: auth, [name]: ['a1', 'a2'] }, 'POST', '/v2/customers/')
      expectError(res, 400, 'header_invalid')
    }
    expect(await customerCount()).toBe(before)
    const same = await twice({ authorization: auth, 'idempotency-key': ['a3', 'a3'] }, 'POST', '/v2/customers/')
    expect(same.status, same.text).toBe(201)
    // a key sent twice is the key sent once: a retry with it once gets the same customer again
    const retry = await twice({ authorization: auth, 'idempotency-key': ['a3'] }, 'POST', '/v2/customers/')
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.body.id).toBe(same.body.id)
  })
})
