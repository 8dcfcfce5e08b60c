import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_AMOUNT } from '../../src/domain/money.js'
import { type Client, cardSource, client, type Json, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'
import { chargeSteps, sourceBody } from './charge-harness.js'

/**
 * Create charge refused: each field's bounds and types, currencies ISO 4217 does not know as
 * money, sources that are unknown, foreign, used or vaulted to another customer, and keys that may
 * not create; a refused create leaves its source unused.
 */

let t: TestApp
/** a second account of the same service: its charges must be invisible to the first */
let other: Client
beforeAll(async () => {
  t = await testApp()
  const acct = await t.app.services.accounts.create('Other shop')
  other = client(t.app, acct.sk_test_key)
})
afterAll(() => t.close())
const { newSource, created, customer, vaulted } = chargeSteps(() => t)

describe('create charge: validation and rules', () => {
  const post = (body: object) => t.sk.post('/v2/charges/', body)

  async function freshId(type = 'card'): Promise<string> {
    return (await newSource(sourceBody(type))).id
  }

  /** A refused create leaves the source unused and chargeable. */
  async function refused(extra: object, status: number, code: string, param?: string) {
    const id = await freshId()
    const res = await post({ amount: 1000, currency: 'usd', source: id, ...extra })
    expectError(res, status, code, param)
    const src = await t.sk.get(`/v2/sources/${id}`)
    expect(src.body.used).toBe(false)
    return res
  }

  it.each([
    ['amount 0', { amount: 0 }],
    ['a negative amount', { amount: -5 }],
    ['a non-integer amount', { amount: 10.5 }],
    ['an amount as a string', { amount: '1000' }],
    ['an amount over the maximum', { amount: MAX_AMOUNT + 1 }],
  ])('%s is 422 on amount', async (_name, extra) => {
    await refused(extra, 422, 'parameter_invalid', 'amount')
  })

  it('the maximum amount is accepted', async () => {
    const c = await created(sourceBody('card'), { amount: MAX_AMOUNT })
    expect(c.amount).toBe(MAX_AMOUNT)
  })

  // HRK was withdrawn when Croatia took the euro (2023)
  it.each(['ABC', 'US', 'usdd', '12$', '', 'HRK'])('currency %j is 422', async (currency) => {
    await refused({ currency }, 422, 'parameter_invalid', 'currency')
  })

  // ISO 4217 codes that are not money: testing, no currency, precious metals, units of account, funds
  it.each([
    'XXX',
    'xts',
    'XAU',
    'XAG',
    'XPT',
    'XPD',
    'XBA',
    'XBD',
    'XDR',
    'XSU',
    'XUA',
    'BOV',
    'CLF',
    'COU',
    'MXV',
    'UYI',
    'UYW',
    'CHE',
    'CHW',
    'USN',
  ])('currency %s, an ISO 4217 code of no money, is 422', async (currency) => {
    const res = await refused({ currency }, 422, 'parameter_invalid', 'currency')
    expect(res.body.error.message).toBe('currency is not the ISO 4217 code of a currency')
  })

  it('a body its schema refuses also names a currency ISO 4217 does not know', async () => {
    const res = await post({ amount: 0, currency: 'xyz', source: await freshId() })
    expectError(res, 422, 'parameter_invalid', 'amount')
    expect(res.body.error.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual([
      'body.amount',
      'body.currency',
    ])
  })

  it.each([
    ['UsD', 'usd'],
    ['EUR', 'eur'],
    ['jpy', 'jpy'],
    ['KWD', 'kwd'],
    // current ISO 4217 codes that some runtimes' Intl lists lack: the Venezuelan bolívar of 2021,
    // the Zimbabwe gold of 2024
    ['VED', 'ved'],
    ['ZWG', 'zwg'],
  ])('currency %s is returned as %s', async (currency, lower) => {
    const c = await created(sourceBody('card'), { currency })
    expect(c.currency).toBe(lower)
  })

  it('missing required fields are 422 parameter_missing', async () => {
    const id = await freshId()
    expectError(await post({ currency: 'usd', source: id }), 422, 'parameter_missing', 'amount')
    expectError(await post({ amount: 100, source: id }), 422, 'parameter_missing', 'currency')
    expectError(await post({ amount: 100, currency: 'usd' }), 422, 'parameter_missing', 'source')
  })

  it('description defaults to "", keeps a given one, refuses "" and 256 characters', async () => {
    const plain = await created(sourceBody('card'))
    expect(plain.description).toBe('')
    const given = await created(sourceBody('card'), { description: 'Order #1 <b>' })
    expect(given.description).toBe('Order #1 <b>')
    await refused({ description: '' }, 422, 'parameter_invalid', 'description')
    await refused({ description: 'd'.repeat(256) }, 422, 'parameter_invalid', 'description')
    const max = await created(sourceBody('card'), { description: 'd'.repeat(255) })
    expect(max.description).toHaveLength(255)
  })

  it('statement_descriptor: default from the account name, 3 and 100 allowed, 2 and 101 and pattern P refused', async () => {
    const plain = await created(sourceBody('card'))
    expect(plain.statement_descriptor).toBe('Test account')
    const three = await created(sourceBody('card'), { statement_descriptor: 'ABC' })
    expect(three.statement_descriptor).toBe('ABC')
    const hundred = "A-b_c.d,e'f#1 ".repeat(8).slice(0, 100)
    const h = await created(sourceBody('card'), { statement_descriptor: hundred })
    expect(h.statement_descriptor).toBe(hundred)
    await refused({ statement_descriptor: 'AB' }, 422, 'parameter_invalid', 'statement_descriptor')
    await refused({ statement_descriptor: 'A'.repeat(101) }, 422, 'parameter_invalid', 'statement_descriptor')
    for (const bad of ['Shop!', 'Shop<script>', 'Café', 'a/b', 'x@y.z', 'ACME\u200bX', 'ACME\u0085X']) {
      await refused({ statement_descriptor: bad }, 422, 'parameter_invalid', 'statement_descriptor')
    }
    // pattern P's \s is any whitespace
    const spaced = await created(sourceBody('card'), { statement_descriptor: 'ACME\r\nX\u00a0Y' })
    expect(spaced.statement_descriptor).toBe('ACME\r\nX\u00a0Y')
  })

  it('an unknown field is 422 parameter_unknown', async () => {
    await refused({ amout: 1000 }, 422, 'parameter_unknown', 'amout')
    await refused({ captured: true }, 422, 'parameter_unknown', 'captured')
  })

  it('wrong types of capture, require_auth and metadata are 422', async () => {
    await refused({ capture: 'false' }, 422, 'parameter_invalid', 'capture')
    await refused({ require_auth: 0 }, 422, 'parameter_invalid', 'require_auth')
    await refused({ metadata: 'x' }, 422, 'parameter_invalid', 'metadata')
  })

  it('a metadata key of digits is named as the text it is, and one that looks like a card number is redacted', async () => {
    const src = (await t.sk.post('/v2/sources/', cardSource())).body.id
    const body = (metadata: Json) => ({ amount: 1000, currency: 'usd', source: src, metadata })
    const digits = await t.sk.post('/v2/charges/', body({ '007': { nested: 1 } }))
    expectError(digits, 422, 'parameter_invalid')
    expect(digits.body.error.param).toBe('metadata.007')
    expect(digits.body.error.detail[0].loc).toEqual(['body', 'metadata', '007'])
    const card = await t.sk.post('/v2/charges/', body({ '4242424242424242': { nested: 1 } }))
    expectError(card, 422, 'parameter_invalid')
    expect(card.text).not.toContain('4242424242424242')
    expect(card.body.error.detail[0].loc).toEqual(['body', 'metadata', '[redacted]'])
    expect((await t.sk.get(`/v2/sources/${src}`)).body.used).toBe(false)
  })

  it('an unknown source is 404 with param source', async () => {
    expectError(
      await post({ amount: 1000, currency: 'usd', source: 'src_00000000000000000000000000000000' }),
      404,
      'resource_missing',
      'source',
    )
    expectError(await post({ amount: 1000, currency: 'usd', source: 'nope' }), 404, 'resource_missing', 'source')
  })

  it("another account's source and a live source are 404 with param source, and stay unused", async () => {
    const foreign = await newSource(cardSource(), other)
    expectError(await post({ amount: 1000, currency: 'usd', source: foreign.id }), 404, 'resource_missing', 'source')
    const live = await newSource(cardSource(), t.skLive)
    expectError(await post({ amount: 1000, currency: 'usd', source: live.id }), 404, 'resource_missing', 'source')
    expect((await other.get(`/v2/sources/${foreign.id}`)).body.used).toBe(false)
    expect((await t.skLive.get(`/v2/sources/${live.id}`)).body.used).toBe(false)
  })

  it('a used source is 400 source_used', async () => {
    const c = await created(sourceBody('card'))
    expectError(await post({ amount: 1000, currency: 'usd', source: c.source.id }), 400, 'source_used', 'source')
    const w = await created(sourceBody('wallet_c'))
    expectError(await post({ amount: 1000, currency: 'usd', source: w.source.id }), 400, 'source_used', 'source')
  })

  it('a source attached to a customer and then detached cannot be charged', async () => {
    const { src, cus } = await vaulted(sourceBody('card'))
    const det = await t.sk.delete(`/v2/customers/${cus.id}/sources/${src.id}`)
    expect(det.status).toBe(200)
    expectError(await post({ amount: 1000, currency: 'usd', source: src.id }), 400, 'source_used', 'source')
  })

  it('a vaulted source needs its own customer', async () => {
    const { src, cus } = await vaulted(sourceBody('card'))
    const stranger = await customer()
    expectError(await post({ amount: 1000, currency: 'usd', source: src.id }), 400, 'customer_source_mismatch')
    expectError(
      await post({ amount: 1000, currency: 'usd', source: src.id, customer: stranger.id }),
      400,
      'customer_source_mismatch',
    )
    expectError(
      await post({ amount: 1000, currency: 'usd', source: src.id, customer: 'cus_00000000000000000000000000000000' }),
      404,
      'resource_missing',
      'customer',
    )
    const list = await t.sk.get('/v2/charges/?limit=100')
    expect(list.body.data.some((c: Json) => c.source.id === src.id)).toBe(false)
    const okRes = await post({ amount: 1000, currency: 'usd', source: src.id, customer: cus.id })
    expect(okRes.status).toBe(201)
    expect(okRes.body.status).toBe('succeeded')
  })

  it('an unvaulted source with a customer is refused', async () => {
    const cus = await customer()
    await refused({ customer: cus.id }, 400, 'customer_source_mismatch')
  })

  it('a public key cannot create a charge; no key is 401', async () => {
    const id = await freshId()
    expectError(
      await t.pk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: id }),
      403,
      'secret_key_required',
    )
    expect((await t.anon.post('/v2/charges/', { amount: 1000, currency: 'usd', source: id })).status).toBe(401)
    expect((await t.sk.get(`/v2/sources/${id}`)).body.used).toBe(false)
  })

  it('a live key without a processor is 400 livemode_unavailable, and the live source stays unused', async () => {
    const live = await newSource(cardSource(), t.skLive)
    expect(live.livemode).toBe(true)
    const res = await t.skLive.post('/v2/charges/', { amount: 1000, currency: 'usd', source: live.id })
    expectError(res, 400, 'livemode_unavailable')
    expect((await t.skLive.get(`/v2/sources/${live.id}`)).body.used).toBe(false)
    const list = await t.skLive.get('/v2/charges/')
    expect(list.body.data).toEqual([])
  })
})
