import { describe, expect, it } from 'vitest'
import { cardSource, client, keptKey } from '../helpers/app.js'
import {
  countCustomers,
  countSources,
  customerBody,
  expectFresh,
  expectReplayOf,
  idem,
  key,
  t,
  useIdempotencyApp,
} from './idempotency-harness.js'

/**
 * `Idempotency-Key` on POST through HTTP: a retry gets the first answer again and creates nothing;
 * another body is 409; keys are per account and mode; the answers kept are sealed; and
 * X-Idempotency-Key is the same header. The key's own rules are in idempotency-keys.test.ts, races
 * in idempotency-concurrency.test.ts.
 */

useIdempotencyApp()

describe('a retry with the same key and body', () => {
  it('gets the same status and body, marked as replayed, and creates no second customer', async () => {
    const k = key()
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(first, 201)
    for (let i = 0; i < 3; i++) expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), first)
    expect(await countCustomers(body.email)).toBe(1)
    const list = await t.sk.get('/v2/customers/?limit=100')
    expect(list.body.data.filter((c: { email: string }) => c.email === body.email)).toHaveLength(1)
  })

  it('creates no second source (200 replayed), with a public key too', async () => {
    for (const c of [t.sk, t.pk]) {
      const k = key()
      const first = await c.post('/v2/sources/', cardSource(), idem(k))
      expectFresh(first, 200)
      const before = await countSources()
      const replay = await c.post('/v2/sources/', cardSource(), idem(k))
      expectReplayOf(replay, first)
      expect(replay.body.id).toBe(first.body.id)
      expect(await countSources()).toBe(before)
    }
  })

  it('replays an attach even after the source has been used: the stored answer, not a rerun', async () => {
    const cus = (await t.sk.post('/v2/customers/', customerBody())).body
    const src = (await t.sk.post('/v2/sources/', cardSource())).body
    const k = key()
    const first = await t.sk.post(`/v2/customers/${cus.id}/sources`, { source: src.id }, idem(k))
    expectFresh(first, 200)
    // a rerun would be 400 source_used now
    const replay = await t.sk.post(`/v2/customers/${cus.id}/sources`, { source: src.id }, idem(k))
    expectReplayOf(replay, first)
    expect(replay.body.sources[0].id).toBe(src.id)
  })

  it('an error answer is replayed too', async () => {
    const a = (await t.sk.post('/v2/customers/', customerBody())).body
    const b = (await t.sk.post('/v2/customers/', customerBody())).body
    const src = (await t.sk.post('/v2/sources/', cardSource())).body
    expect((await t.sk.post(`/v2/customers/${a.id}/sources`, { source: src.id })).status).toBe(200)
    const k = key()
    const first = await t.sk.post(`/v2/customers/${b.id}/sources`, { source: src.id }, idem(k))
    expectFresh(first, 400)
    expect(first.body.error.code).toBe('source_used')
    expectReplayOf(await t.sk.post(`/v2/customers/${b.id}/sources`, { source: src.id }, idem(k)), first)

    const k404 = key()
    const missing = await t.sk.post(
      '/v2/customers/cus_00000000000000000000000000000000/sources',
      { source: src.id },
      idem(k404),
    )
    expectFresh(missing, 404)
    expectReplayOf(
      await t.sk.post('/v2/customers/cus_00000000000000000000000000000000/sources', { source: src.id }, idem(k404)),
      missing,
    )
  })

  it('the same body with its keys in another order, or the path with or without its trailing slash, is the same request', async () => {
    const k = key()
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(first, 201)
    expectReplayOf(await t.sk.post('/v2/customers', body, idem(k)), first)
    const reordered = JSON.stringify({ description: body.description, email: body.email })
    expectReplayOf(await t.sk.post('/v2/customers/', reordered, idem(k)), first)
    expect(await countCustomers(body.email)).toBe(1)
  })

  it('without a key, every request runs', async () => {
    const body = customerBody()
    const a = await t.sk.post('/v2/customers/', body)
    const b = await t.sk.post('/v2/customers/', body)
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(a.body.id).not.toBe(b.body.id)
    expect(b.headers['idempotent-replayed']).toBeUndefined()
    expect(await countCustomers(body.email)).toBe(2)
  })
})

describe('the same key for another request', () => {
  it('another body is 409 idempotency_key_reused and creates nothing', async () => {
    const k = key()
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(first, 201)
    const otherBody = customerBody()
    const res = await t.sk.post('/v2/customers/', otherBody, idem(k))
    expect(res.status).toBe(409)
    expect(res.body.error.type).toBe('idempotency_error')
    expect(res.body.error.code).toBe('idempotency_key_reused')
    expect(res.headers['idempotent-replayed']).toBeUndefined()
    expect(await countCustomers(otherBody.email)).toBe(0)
    // the first answer is still kept
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), first)
  })

  it('another path is 409', async () => {
    const k = key()
    expectFresh(await t.sk.post('/v2/customers/', customerBody(), idem(k)), 201)
    const before = await countSources()
    const res = await t.sk.post('/v2/sources/', cardSource(), idem(k))
    expect(res.status).toBe(409)
    expect(res.body.error.type).toBe('idempotency_error')
    expect(await countSources()).toBe(before)
  })

  it('another account or another mode has keys of its own', async () => {
    const k = key()
    const body = customerBody()
    const mine = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(mine, 201)

    const live = await t.skLive.post('/v2/customers/', body, idem(k))
    expectFresh(live, 201)
    expect(live.body.id).not.toBe(mine.body.id)
    expect(live.body.livemode).toBe(true)

    const account = await t.app.services.accounts.create('Other')
    const theirs = await client(t.app, account.sk_test_key).post('/v2/customers/', body, idem(k))
    expectFresh(theirs, 201)
    expect(theirs.body.id).not.toBe(mine.body.id)

    // and another body under the same key elsewhere is no conflict either
    expectFresh(await t.skLive.post('/v2/sources/', cardSource(), idem(`${k}-x`)), 200)
    expectFresh(await client(t.app, account.pk_test_key).post('/v2/sources/', cardSource(), idem(`${k}-x`)), 200)

    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), mine)
    expectReplayOf(await t.skLive.post('/v2/customers/', body, idem(k)), live)
    expect(await countCustomers(body.email)).toBe(3)
  })
})

describe('the answers kept', () => {
  it('are sealed at rest: a rolled webhook secret is not in the store, and the retry gets it back', async () => {
    const k = key()
    const first = await t.sk.post('/v2/me/webhook_secret/roll', undefined, idem(k))
    expectFresh(first, 200)
    expect(first.body.secret).toMatch(/^whsec_/)
    const kept = await t.db.query<{ response_body: string }>(
      'SELECT response_body FROM idempotency_keys WHERE key = $1',
      [keptKey(t, k)],
    )
    expect(kept.rows).toHaveLength(1)
    expect(kept.rows[0]?.response_body).toMatch(/^v1:/)
    expect(kept.rows[0]?.response_body).not.toContain(first.body.secret)
    expect(kept.rows[0]?.response_body).not.toContain('whsec_')
    expectReplayOf(await t.sk.post('/v2/me/webhook_secret/roll', undefined, idem(k)), first)
  })
})

describe('what is kept of a request', () => {
  it('no form of a security code: the same request with another code is the same request', async () => {
    const k = key()
    const first = await t.pk.post('/v2/sources/', cardSource({ cvc: '4821' }), idem(k))
    expectFresh(first, 200)
    expectReplayOf(await t.pk.post('/v2/sources/', cardSource({ cvc: '1234' }), idem(k)), first)
    // another card number is another request
    expect((await t.pk.post('/v2/sources/', cardSource({ number: '5555555555554444' }), idem(k))).status).toBe(409)

    const src = (await t.sk.post('/v2/sources/', cardSource())).body.id
    const charge = { amount: 900, currency: 'usd', source: src }
    const k2 = key()
    const paid = await t.sk.post('/v2/charges/', { ...charge, cvc: '4821' }, idem(k2))
    expectFresh(paid, 201)
    expectReplayOf(await t.sk.post('/v2/charges/', { ...charge, cvc: '9999' }, idem(k2)), paid)
    // a field of another name is compared, wherever it is
    const k3 = key()
    const customer = customerBody()
    expectFresh(await t.sk.post('/v2/customers/', { ...customer, metadata: { cvc: 'a' } }, idem(k3)), 201)
    const other = await t.sk.post('/v2/customers/', { ...customer, metadata: { cvc: 'b' } }, idem(k3))
    expect(other.status).toBe(409)
  })

  it('not the text of a key, which a client may fill with anything: a keyed hash of it', async () => {
    const [spaced, dashed] = ['4012 8888 8888 1881', '4012-8888-8888-1881']
    const src = await t.sk.post('/v2/sources/', cardSource(), idem(spaced))
    expectFresh(src, 200)
    const charge = { amount: 900, currency: 'usd', source: src.body.id }
    const paid = await t.sk.post('/v2/charges/', charge, idem(dashed))
    expectFresh(paid, 201)
    expectReplayOf(await t.sk.post('/v2/charges/', charge, idem(dashed)), paid)
    const stored = await t.db.query<{ text: string }>(
      `SELECT concat_ws(' ', (SELECT string_agg(to_json(s)::text, ' ') FROM sources s),
         (SELECT string_agg(to_json(c)::text, ' ') FROM charges c),
         (SELECT string_agg(to_json(k)::text, ' ') FROM idempotency_keys k)) AS text`,
    )
    const text = stored.rows[0]?.text ?? ''
    expect(text).toContain(keptKey(t, spaced))
    expect(text).toContain(keptKey(t, dashed))
    expect(text).not.toMatch(/4012[ -]?8888[ -]?8888[ -]?1881/)
  })
})

describe('X-Idempotency-Key', () => {
  it('is the same header as Idempotency-Key: a retry under either name is replayed and creates nothing', async () => {
    const k = key()
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, { 'x-idempotency-key': k })
    expectFresh(first, 201)
    expectReplayOf(await t.sk.post('/v2/customers/', body, { 'x-idempotency-key': k }), first)
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), first)
    expect(await countCustomers(body.email)).toBe(1)
  })

  it('is checked as Idempotency-Key is, and the two names with different keys are 400, running nothing', async () => {
    const tooLong = customerBody()
    const long = await t.sk.post('/v2/customers/', tooLong, { 'x-idempotency-key': 'k'.repeat(256) })
    expect(long.status).toBe(400)
    expect(long.body.error.code).toBe('header_invalid')
    const both = customerBody()
    const res = await t.sk.post('/v2/customers/', both, { ...idem(key()), 'x-idempotency-key': key() })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ code: 'header_invalid', param: 'Idempotency-Key' })
    expect(await countCustomers(tooLong.email)).toBe(0)
    expect(await countCustomers(both.email)).toBe(0)
  })
})
