import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, type Reply, TEST_CARD, type TestApp, testApp } from '../helpers/app.js'
import { grepStoreFor, leakFinder } from './card-leaks.js'

/**
 * A grep over everything the service gives out or keeps: after card sources are created, used,
 * fetched, listed and refused, no response body, no log line and no stored column holds a full
 * card number or a security code in plain text. The number is kept only as a ciphertext.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const futureYear = String(new Date().getUTCFullYear() + 2)

/** Valid cards: number, security code, the key that creates them. */
const CARDS: { number: string; cvc: string; client: () => Client; idempotencyKey?: string }[] = [
  { number: '4242424242424242', cvc: '987', client: () => t.sk },
  { number: '5555555555554444', cvc: '4321', client: () => t.pk, idempotencyKey: 'card-data-1' },
  { number: '378282246310005', cvc: '4321', client: () => t.skLive },
  { number: '6011111111111117', cvc: '987', client: () => t.sk, idempotencyKey: 'card-data-2' },
  { number: '4000056655665556', cvc: '987', client: () => t.pkLive },
  { number: '4000000000003220', cvc: '4321', client: () => t.sk },
]

/** Numbers only ever sent in refused requests. */
const REFUSED_NUMBERS = [
  '4242424242424241', // fails Luhn
  '5555555555554443', // fails Luhn
  '42424242424', // 11 digits
  '42424242424242424242', // 20 digits
  '4000000000000002', // valid, but sent with an expired date
  '4000000000009995', // valid, but sent with a bad security code
  '4000000000000127', // valid, but sent with an unknown field
  '4012888888881881', // valid, but sent where an id goes
]
const CVCS = ['987', '4321']

const ALL_NUMBERS = [...CARDS.map((c) => c.number), ...REFUSED_NUMBERS]

const leaks = leakFinder(ALL_NUMBERS, CVCS)
const grepStore = () => grepStoreFor(t.db, leaks)

const responses: Reply[] = []
const sourceNumbers = new Map<string, { number: string; cvc: string }>()
let customerId: string

async function record(res: Promise<Reply>): Promise<Reply> {
  const r = await res
  responses.push(r)
  return r
}

describe('card data never leaves or rests in plain text', () => {
  beforeAll(async () => {
    // create card sources with several keys and modes, some under an Idempotency-Key
    for (const card of CARDS) {
      const body = {
        type: 'card',
        card: { ...TEST_CARD, number: card.number, cvc: card.cvc, exp_year: futureYear, address_zip: '1000' },
        owner: { name: 'Ann Lee', billing: { name: 'Ann Lee', zip_code: '1000' } },
      }
      const headers: Record<string, string> = card.idempotencyKey ? { 'idempotency-key': card.idempotencyKey } : {}
      const res = await record(card.client().post('/v2/sources/', body, headers))
      expect(res.status, res.text).toBe(200)
      sourceNumbers.set(res.body.id, { number: card.number, cvc: card.cvc })
      if (card.idempotencyKey) {
        const replay = await record(card.client().post('/v2/sources/', body, headers))
        expect(replay.headers['idempotent-replayed']).toBe('true')
      }
    }
    const testSources = [...sourceNumbers.keys()]

    // attach one to a customer, then fetch and list
    const cus = await record(t.sk.post('/v2/customers/', { email: 'card.data@example.com', description: 'Holder' }))
    expect(cus.status).toBe(201)
    customerId = cus.body.id
    const attach = await record(t.sk.post(`/v2/customers/${customerId}/sources`, { source: testSources[0] }))
    expect(attach.status, attach.text).toBe(200)
    const attachAgain = await record(
      t.sk.post(`/v2/customers/${customerId}/sources`, { source: testSources[0] }, { 'idempotency-key': 'cd-3' }),
    )
    expect(attachAgain.status).toBe(400)
    await record(t.sk.get(`/v2/customers/${customerId}`))
    await record(t.sk.get('/v2/customers/'))
    await record(t.sk.get('/v2/customers/by_email/card.data@example.com'))
    await record(t.sk.put(`/v2/customers/${customerId}`, { description: 'Still the holder' }))
    for (const id of testSources) {
      await record(t.sk.get(`/v2/sources/${id}`))
      await record(t.pk.get(`/v2/sources/${id}`))
      await record(t.skLive.get(`/v2/sources/${id}`))
    }

    // refused requests that carry a number
    const refused: [unknown, number][] = [
      [{ type: 'card', card: { ...TEST_CARD, number: '4242424242424241', cvc: '987' } }, 422],
      [{ type: 'card', card: { ...TEST_CARD, number: '5555555555554443', cvc: '4321' } }, 422],
      [{ type: 'card', card: { ...TEST_CARD, number: '42424242424', cvc: '987' } }, 422],
      [{ type: 'card', card: { ...TEST_CARD, number: '42424242424242424242', cvc: '987' } }, 422],
      [{ type: 'card', card: { ...TEST_CARD, number: '4000000000000002', cvc: '4321', exp_year: '2001' } }, 422],
      [{ type: 'card', card: { ...TEST_CARD, number: '4000000000009995', cvc: '98' } }, 422],
      [{ type: 'card', card: { ...TEST_CARD, number: '4000000000000127', cvc: '987', pin: '1234' } }, 422],
      [{ type: 'wallet_a', card: { ...TEST_CARD, number: '4242424242424242', cvc: '987' } }, 422],
      // a number where the type goes: the answer names the type's problem without repeating it
      [{ type: '4012888888881881', card: { ...TEST_CARD, number: '4242424242424242', cvc: '987' } }, 422],
      [{ type: 'card', card: { ...TEST_CARD, number: 4242424242424242, cvc: 987 } }, 422],
      ['{"type":"card","card":{"number":"4242424242424242","cvc":"987"', 400],
    ]
    for (const [body, status] of refused) {
      const res = await record(t.sk.post('/v2/sources/', body))
      expect(res.status, res.text).toBe(status)
    }
    // a refused one under an Idempotency-Key, whose answer is stored
    const keyed = await record(
      t.sk.post(
        '/v2/sources/',
        { type: 'card', card: { ...TEST_CARD, number: '4242424242424241', cvc: '987' } },
        { 'idempotency-key': 'cd-4' },
      ),
    )
    expect(keyed.status).toBe(422)
    // and a key reused with another card
    const reused = await record(
      t.pk.post(
        '/v2/sources/',
        { type: 'card', card: { ...TEST_CARD, number: '4242424242424242', cvc: '987' } },
        { 'idempotency-key': 'card-data-1' },
      ),
    )
    expect(reused.status).toBe(409)
    // a number sent where an id goes names nothing: the 404 must not echo it, nor keep it
    const asSource = await record(
      t.sk.post(
        '/v2/charges/',
        { amount: 500, currency: 'usd', source: '4012888888881881' },
        { 'idempotency-key': 'cd-5' },
      ),
    )
    expect(asSource.status, asSource.text).toBe(404)
    const spaced = await record(
      t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: '4012 8888 8888 1881' }),
    )
    expect(spaced.status, spaced.text).toBe(404)
    // split as people split it, by a dash with spaces, two dashes, dots, a comma, an en dash
    for (const split of [' - ', '--', '.', ', ', '\u2013']) {
      const source = ['4012', '8888', '8888', '1881'].join(split)
      const res = await record(t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source }))
      expect(res.status, res.text).toBe(404)
    }
    const asCustomer = await record(
      t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: testSources[1], customer: '4012888888881881' }),
    )
    expect(asCustomer.status, asCustomer.text).toBe(404)
    expect((await record(t.sk.get('/v2/charges/4012888888881881'))).status).toBe(404)
    expect((await record(t.sk.get('/v2/customers/4012888888881881'))).status).toBe(404)
    // in a path, as a client encodes it, after an id's prefix, or where no route is
    for (const path of [
      '/v2/nope/4012%208888%208888%201881',
      '/v2/charges/4012%2D8888%2D8888%2D1881/capture/x',
      '/v2/charges/ch_4012888888881881',
      '/v2/customers/by_email/4012%208888%208888%201881',
      '/v2/charges/?start_after=ch_4012888888881881',
      // next to letters, or after an escape that is not one
      '/v2/sources/a4012888888881881',
      '/v2/sources/4012888888881881x',
      '/v2/sources/4012888888881881_',
      '/v2/sources/4012%0A8888%0A8888%0A1881',
      '/v2/sources/%ZZ4012888888881881',
      '/v2/sources/4012%2B8888%2B8888%2B1881',
      '/v2/charges/?start_after=x4012888888881881',
      '/v2/x4012888888881881',
      '/v2/customers/by_email/x4012888888881881@example.com',
      // inside a word of hex digits that is none of the service's ids, or with the expiry and code after it
      '/v2/sources/deadbeef4012888888881881',
      '/v2/sources/src_4012888888881881abcdef0123456789ab',
      '/v2/sources/40128888888818811230987',
      '/v2/charges/ch_4012888888881881deadbeef',
      // shaped as the service's own: an id, a page token
      '/v2/charges/ch_4012888888881881deadbeefdeadbeef',
      '/v2/charges/?start_after=src_4012888888881881deadbeefdeadbeef',
      '/v2/charges/4012888888881881deadbeefdeadbeefdeadbeefdeadbeef',
      '/v2/charges/4012--8888--8888--1881',
      '/v2/charges/4012%20-%208888%20-%208888%20-%201881',
    ]) {
      const res = await record(t.sk.get(path))
      expect(res.status, path).toBeGreaterThanOrEqual(400)
      expect(res.status, path).toBeLessThan(500)
    }
    // a cursor too long to show whole is cut after the number is taken out, not through it
    const longCursor = await record(t.sk.get(`/v2/charges/?start_after=${'x'.repeat(89)}4012888888881881`))
    expect(longCursor.status).toBe(400)
    expect(longCursor.text).not.toMatch(/4012888/)
    const wrongMethod = await record(t.sk.delete('/v2/charges/4012%2D8888%2D8888%2D1881'))
    expect(wrongMethod.status).toBe(405)
    const wrongMethodNextToText = await record(t.sk.delete('/v2/charges/x4012888888881881'))
    expect(wrongMethodNextToText.status).toBe(405)
    // a number as a field's name: the refusal names the field without repeating it
    for (const res of [
      await record(t.sk.post('/v2/customers/', { email: 'x@example.com', description: 'x', '4012888888881881': 1 })),
      await record(t.sk.post('/v2/sources/', { type: 'card', card: { ...TEST_CARD, '4012 8888 8888 1881': '1' } })),
      await record(
        t.sk.post('/v2/sources/', { type: 'card', card: { ...TEST_CARD, '4012 - 8888 - 8888 - 1881': '1' } }),
      ),
      await record(t.sk.get('/v2/charges/?4012888888881881=1')),
    ]) {
      expect(res.status, res.text).toBe(422)
      expect(res.body.error.code).toBe('parameter_unknown')
      expect(res.text).toContain('[redacted]')
    }
  })

  it('no response body holds a card number or a security code', () => {
    expect(responses.length).toBeGreaterThan(40)
    for (const res of responses) expect(leaks(res.text), res.text).toEqual([])
    // the responses do show what they may: the last four digits
    const shown = responses.filter((r) => r.body?.card?.last4)
    expect(shown.length).toBeGreaterThan(10)
    for (const r of shown) expect(r.body.card.last4).toMatch(/^\d{4}$/)
  })

  it('no log line holds a card number or a security code', () => {
    expect(t.logs.length).toBeGreaterThan(responses.length)
    for (const line of t.logs) expect(leaks(line), line).toEqual([])
  })

  it('no stored column of any table holds a card number or a security code', async () => {
    const rows = await grepStore()
    expect([...rows.keys()]).toEqual(
      expect.arrayContaining(['accounts', 'api_keys', 'customers', 'sources', 'idempotency_keys']),
    )
    expect([...rows.values()].reduce((a, b) => a + b)).toBeGreaterThan(CARDS.length)
    // the stored answers of keyed requests are among them
    const kept = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM idempotency_keys')
    expect(Number(kept.rows[0]?.n)).toBeGreaterThanOrEqual(3)
  })

  it('keeps the number and the security code only as ciphertexts', async () => {
    const stored = await t.db.query<{ id: string; card_number_enc: string | null; card_cvc_enc: string | null }>(
      "SELECT id, card_number_enc, card_cvc_enc FROM sources WHERE type = 'card' ORDER BY id",
    )
    expect(stored.rows).toHaveLength(CARDS.length)
    const ciphertexts = new Set<string>()
    for (const row of stored.rows) {
      const sent = sourceNumbers.get(row.id)
      expect(sent).toBeDefined()
      expect(row.card_number_enc).not.toBeNull()
      expect(row.card_number_enc).toMatch(/^v1:[A-Za-z0-9+/]+=*$/)
      expect(row.card_cvc_enc).toMatch(/^v1:[A-Za-z0-9+/]+=*$/)
      // they are the card's own number and code, sealed
      expect(t.vault.decrypt(row.card_number_enc as string)).toBe(sent?.number)
      expect(t.vault.decrypt(row.card_cvc_enc as string)).toBe(sent?.cvc)
      ciphertexts.add(row.card_number_enc as string)
    }
    // a fresh nonce each time: the same code never gives the same ciphertext
    expect(ciphertexts.size).toBe(stored.rows.length)
    const cvcs = stored.rows.map((r) => r.card_cvc_enc)
    expect(new Set(cvcs).size).toBe(cvcs.length)
  })

  it('a refused card leaves no source behind', async () => {
    const res = await t.db.query<{ n: number }>("SELECT count(*) AS n FROM sources WHERE type = 'card'")
    expect(Number(res.rows[0]?.n)).toBe(CARDS.length)
  })
})

describe('card data of sources nothing can charge again', () => {
  it('a source detached from its customer, or left by a deleted customer, keeps no number or security code', async () => {
    const holder = await t.sk.post('/v2/customers/', { email: 'detach@example.com', description: 'Holder' })
    const other = await t.sk.post('/v2/customers/', { email: 'deleted@example.com', description: 'Holder' })
    const make = async () => {
      const src = await t.sk.post('/v2/sources/', {
        type: 'card',
        card: { ...TEST_CARD, number: '4242424242424242', cvc: '987', exp_year: futureYear },
      })
      expect(src.status, src.text).toBe(200)
      return src.body.id as string
    }
    const [detached, left, kept] = [await make(), await make(), await make()]
    for (const [cus, src] of [
      [holder.body.id, detached],
      [other.body.id, left],
      [holder.body.id, kept],
    ]) {
      const attached = await t.sk.post(`/v2/customers/${cus}/sources`, { source: src })
      expect(attached.status, attached.text).toBe(200)
    }
    expect((await t.sk.delete(`/v2/customers/${holder.body.id}/sources/${detached}`)).status).toBe(200)
    expect((await t.sk.delete(`/v2/customers/${other.body.id}`)).status).toBe(200)
    const secrets = await t.db.query<{ id: string; card_number_enc: string | null; card_cvc_enc: string | null }>(
      'SELECT id, card_number_enc, card_cvc_enc FROM sources WHERE id = ANY($1::text[])',
      [[detached, left, kept]],
    )
    const of = (id: string) => secrets.rows.find((r) => r.id === id)
    expect(of(detached)).toMatchObject({ card_number_enc: null, card_cvc_enc: null })
    expect(of(left)).toMatchObject({ card_number_enc: null, card_cvc_enc: null })
    // one still attached can be charged again: it keeps its number
    expect(of(kept)?.card_number_enc).toMatch(/^v1:/)
    // and a detached source cannot be charged again, with or without its card
    const charge = await t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: detached })
    expect(charge.status, charge.text).toBe(400)
    expect(charge.body.error.code).toBe('source_used')
  })
})
