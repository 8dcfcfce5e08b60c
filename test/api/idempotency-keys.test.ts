import { describe, expect, it } from 'vitest'
import { cardSource, keptKey } from '../helpers/app.js'
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
 * The Idempotency-Key itself: its length, what does not use it up, whose it is, how long it is
 * kept, a claim still held or lapsed, and the methods that use it.
 */

useIdempotencyApp()

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

    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '23 hours' WHERE key = $1", [
      keptKey(t, k),
    ])
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), first)

    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [
      keptKey(t, k),
    ])
    const again = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(again, 201)
    expect(again.body.id).not.toBe(first.body.id)
    expect(await countCustomers(body.email)).toBe(2)
    // and the new answer is the one kept now
    expectReplayOf(await t.sk.post('/v2/customers/', body, idem(k)), again)

    // an expired key may also carry another body
    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [
      keptKey(t, k),
    ])
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
      [keptKey(t, k)],
    )
    const busy = await t.sk.post('/v2/customers/', body, idem(k))
    expect(busy.status).toBe(409)
    expect(busy.body.error.type).toBe('idempotency_error')
    expect(busy.body.error.code).toBe('idempotency_key_in_use')
    expect(await countCustomers(body.email)).toBe(1)

    // its holder died: once the claim lapses a retry runs
    await t.db.query("UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = $1", [
      keptKey(t, k),
    ])
    const retried = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(retried, 201)
    // the first attempt had made the customer: the retry answers it, and makes none again
    expect(await countCustomers(body.email)).toBe(1)
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
