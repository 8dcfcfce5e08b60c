import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, client, type Reply, type TestApp, testApp } from './helpers/app.js'

/**
 * `Idempotency-Key` on POST through HTTP: a retry gets the first answer again and creates nothing;
 * another body is 409; keys are per account and mode; answers are kept 24 hours; and, on
 * PostgreSQL, one key raced across two processes creates one object.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const key = () => `key-${randomUUID()}`
const idem = (k: string) => ({ 'idempotency-key': k })

let seq = 0
const customerBody = () => ({ email: `idem.${++seq}.${Date.now()}@example.com`, description: 'Idempotent' })

async function countCustomers(email: string): Promise<number> {
  const res = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM customers WHERE email = $1', [email])
  return Number(res.rows[0]?.n)
}
async function countSources(): Promise<number> {
  const res = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM sources')
  return Number(res.rows[0]?.n)
}

function expectReplayOf(replay: Reply, first: Reply) {
  expect(replay.status).toBe(first.status)
  expect(replay.text).toBe(first.text)
  expect(replay.headers['idempotent-replayed']).toBe('true')
  expect(String(replay.headers['content-type'])).toMatch(/^application\/json/)
}

function expectFresh(res: Reply, status: number) {
  expect(res.status, res.text).toBe(status)
  expect(res.headers['idempotent-replayed']).toBeUndefined()
}

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
      [k],
    )
    expect(kept.rows).toHaveLength(1)
    expect(kept.rows[0]?.response_body).toMatch(/^v1:/)
    expect(kept.rows[0]?.response_body).not.toContain(first.body.secret)
    expect(kept.rows[0]?.response_body).not.toContain('whsec_')
    expectReplayOf(await t.sk.post('/v2/me/webhook_secret/roll', undefined, idem(k)), first)
  })
})

describe('the key itself', () => {
  it('255 characters is fine; longer, or empty, is 400 and runs nothing', async () => {
    const long = 'k'.repeat(255)
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, idem(long))
    expectFresh(first, 201)
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(long)), first)

    for (const bad of [`${long}k`, 'x'.repeat(1000), '']) {
      const other = customerBody()
      const res = await t.sk.post('/v2/customers/', other, idem(bad))
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('header_invalid')
      expect(res.body.error.param).toBe('Idempotency-Key')
      expect(await countCustomers(other.email)).toBe(0)
    }
  })

  it('a request refused by validation does not use the key up', async () => {
    const k = key()
    const bad = await t.sk.post('/v2/customers/', { email: 'not an email', description: 'x' }, idem(k))
    expect(bad.status).toBe(422)
    const good = await t.sk.post('/v2/customers/', customerBody(), idem(k))
    expectFresh(good, 201)
  })

  it('a card refused by the service checks (422 card_number_invalid, card_expired) does not use the key up', async () => {
    for (const bad of [{ number: '4242424242424241' }, { exp_year: '2001' }]) {
      const k = key()
      const refused = await t.sk.post('/v2/sources/', cardSource(bad), idem(k))
      expect(refused.status).toBe(422)
      const before = await countSources()
      const fixed = await t.sk.post('/v2/sources/', cardSource(), idem(k))
      expectFresh(fixed, 200)
      expect(await countSources()).toBe(before + 1)
      expectReplayOf(await t.sk.post('/v2/sources/', cardSource(), idem(k)), fixed)
    }
  })

  it("a public key's holders have keys of their own: they cannot use up the secret key's", async () => {
    const k = key()
    // anyone may hold the public key: it is published in pages
    expectFresh(await t.pk.post('/v2/sources/', cardSource(), idem(k)), 200)
    const secretFirst = await t.sk.post('/v2/sources/', cardSource(), idem(k))
    expectFresh(secretFirst, 200)
    // and each replays its own answer
    expect((await t.pk.post('/v2/sources/', cardSource(), idem(k))).headers['idempotent-replayed']).toBe('true')
    expectReplayOf(await t.sk.post('/v2/sources/', cardSource(), idem(k)), secretFirst)
  })

  it('a request refused before it runs (no key, public key) does not use the key up', async () => {
    const k = key()
    const body = customerBody()
    expect((await t.anon.post('/v2/customers/', body, idem(k))).status).toBe(401)
    expect((await t.pk.post('/v2/customers/', body, idem(k))).status).toBe(403)
    expectFresh(await t.sk.post('/v2/customers/', body, idem(k)), 201)
  })

  it('is kept 24 hours: after that the key works afresh', async () => {
    const k = key()
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(first, 201)

    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '23 hours' WHERE key = $1", [k])
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), first)

    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [k])
    const again = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(again, 201)
    expect(again.body.id).not.toBe(first.body.id)
    expect(await countCustomers(body.email)).toBe(2)
    // and the new answer is the one kept now
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), again)

    // an expired key may also carry another body
    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [k])
    expectFresh(await t.sk.post('/v2/sources/', cardSource(), idem(k)), 200)
  })

  it('while the first request still runs, a retry is 409 idempotency_key_in_use; a lapsed claim is taken over', async () => {
    const k = key()
    const body = customerBody()
    expectFresh(await t.sk.post('/v2/customers/', body, idem(k)), 201)
    // make the record look like a request still in progress
    await t.db.query(
      `UPDATE idempotency_keys SET status_code = NULL, response_body = NULL,
         locked_until = now() + interval '60 seconds' WHERE key = $1`,
      [k],
    )
    const busy = await t.sk.post('/v2/customers/', body, idem(k))
    expect(busy.status).toBe(409)
    expect(busy.body.error.type).toBe('idempotency_error')
    expect(busy.body.error.code).toBe('idempotency_key_in_use')
    expect(await countCustomers(body.email)).toBe(1)

    // its holder died: once the claim lapses a retry runs
    await t.db.query("UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = $1", [k])
    const retried = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(retried, 201)
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), retried)
  })

  it('only POST uses it: a PUT with a key runs each time', async () => {
    const cus = (await t.sk.post('/v2/customers/', customerBody())).body
    const k = key()
    const a = await t.sk.put(`/v2/customers/${cus.id}`, { description: 'one' }, idem(k))
    const b = await t.sk.put(`/v2/customers/${cus.id}`, { description: 'two' }, idem(k))
    expect(a.status).toBe(200)
    expect(b.status).toBe(200)
    expect(b.body.description).toBe('two')
  })
})

describe('one key, concurrent requests in one process', () => {
  it('10 identical requests at once create one customer', async () => {
    const k = key()
    const body = customerBody()
    const results = await Promise.all(Array.from({ length: 10 }, () => t.sk.post('/v2/customers/', body, idem(k))))
    const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined)
    expect(created).toHaveLength(1)
    for (const r of results) {
      if (r === created[0]) continue
      if (r.status === 409) expect(r.body.error.code).toBe('idempotency_key_in_use')
      else expectReplayOf(r, created[0] as Reply)
    }
    expect(await countCustomers(body.email)).toBe(1)
  })
})

describe('one key across two processes (PostgreSQL)', () => {
  let twin: TestApp
  beforeAll(async () => {
    twin = await t.twin()
  })
  afterAll(() => twin.close())

  it('a key used on one process is replayed on the other', async () => {
    const k = key()
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(first, 201)
    expectReplayOf(await twin.sk.post('/v2/customers/', body, idem(k)), first)
    expect(await countCustomers(body.email)).toBe(1)
  })

  it('10 identical requests at once: one creates, the others wait (409) or get its answer', async () => {
    for (let round = 0; round < 3; round++) {
      const k = key()
      const body = customerBody()
      const clients: Client[] = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? t.sk : twin.sk))
      const results = await Promise.all(clients.map((c) => c.post('/v2/customers/', body, idem(k))))
      const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined)
      expect(created).toHaveLength(1)
      const original = created[0] as Reply
      for (const r of results) {
        if (r === original) continue
        if (r.status === 409) {
          expect(r.body.error.code).toBe('idempotency_key_in_use')
        } else {
          expectReplayOf(r, original)
        }
      }
      expect(await countCustomers(body.email)).toBe(1)
      expectReplayOf(await twin.sk.post('/v2/customers/', body, idem(k)), original)
    }
  })

  it('10 identical source creations at once make one source', async () => {
    const k = key()
    const before = await countSources()
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? t.pk : twin.pk).post('/v2/sources/', cardSource(), idem(k))),
    )
    const created = results.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)
    expect(created).toHaveLength(1)
    for (const r of results) {
      expect([200, 409]).toContain(r.status)
      if (r.status === 200) expect(r.body.id).toBe(created[0]?.body.id)
    }
    expect(await countSources()).toBe(before + 1)
  })
})
