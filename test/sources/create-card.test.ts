import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_CARDS } from '../../src/domain/card.js'
import { type Client, REDIRECT, type Reply, TEST_CARD, type TestApp, testApp } from '../helpers/app.js'
import { expectRefused } from '../helpers/expect.js'
import {
  cardBody,
  expectOk,
  luhnNumber,
  ownerBody,
  sourceCreate,
  thisMonth,
  thisYear,
  walletBody,
  withValue,
} from './source-harness.js'

/**
 * Create a card source: the number's check digit and length, the expiry, every broken rule named,
 * and what the source shows of the card (never its number or security code).
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const create = sourceCreate(() => t)

describe('card number and expiry', () => {
  it('a number failing the Luhn check is 422 card_number_invalid', async () => {
    for (const number of ['4242424242424241', '5555555555554445', '1234567812345678']) {
      const res = await create(withValue(cardBody(), ['card', 'number'], number))
      expectRefused(res, ['body', 'card', 'number'], 'card_number_invalid')
      expect(res.body.error.type).toBe('card_error')
      expect(res.text).not.toContain(number)
    }
  })

  it('12 and 19 digits pass; 11 and 20 digits are 422 even when the Luhn check holds', async () => {
    for (const length of [12, 19]) {
      const number = luhnNumber('4', length)
      const res = await create(withValue(cardBody(), ['card', 'number'], number))
      expectOk(res)
      expect(res.body.card.last4).toBe(number.slice(-4))
    }
    for (const length of [11, 20]) {
      const number = luhnNumber('4', length)
      expectRefused(await create(withValue(cardBody(), ['card', 'number'], number)), ['body', 'card', 'number'])
    }
  })

  it('a number with spaces, dashes or letters is 422', async () => {
    for (const number of ['4242 4242 4242 4242', '4242-4242-4242-4242', '424242424242424a', '']) {
      expectRefused(await create(withValue(cardBody(), ['card', 'number'], number)), ['body', 'card', 'number'])
    }
  })

  it('an expiry in the past is 422 card_expired; the current month is still valid', async () => {
    const past: [string, string][] = [
      ['12', String(thisYear - 1)],
      ['1', String(thisYear - 10)],
      thisMonth > 1 ? [String(thisMonth - 1), String(thisYear)] : ['12', String(thisYear - 1)],
    ]
    for (const [month, year] of past) {
      const res = await create({ type: 'card', card: { ...TEST_CARD, exp_month: month, exp_year: year } })
      expect(res.status, res.text).toBe(422)
      expect(res.body.error.code).toBe('card_expired')
      expect(res.body.error.detail[0].loc.slice(0, 2)).toEqual(['body', 'card'])
    }
    const current = await create({
      type: 'card',
      card: { ...TEST_CARD, exp_month: String(thisMonth), exp_year: String(thisYear) },
    })
    expectOk(current)
  })

  it('every broken rule of one body is named, one detail entry each', async () => {
    const both = await create({ type: 'card', card: { ...TEST_CARD, number: '4242424242424241', exp_year: '2001' } })
    expect(both.status, both.text).toBe(422)
    expect(both.body.error).toMatchObject({ code: 'card_number_invalid', param: 'card.number', type: 'card_error' })
    expect(both.body.error.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual([
      'body.card.number',
      'body.card.exp_year',
    ])
    expect(both.text).not.toContain('4242424242424241')
    const wallet = await create({ type: 'wallet_a', card: TEST_CARD })
    expect(wallet.status, wallet.text).toBe(422)
    expect(wallet.body.error.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual([
      'body.card',
      'body.redirect',
    ])
  })

  it('a body its schema refuses also names the rules the schema cannot state, each field once', async () => {
    const locs = (res: Reply) => res.body.error.detail.map((d: { loc: string[] }) => d.loc.join('.'))
    const card = await create({
      type: 'card',
      card: { ...TEST_CARD, name: 'N'.repeat(51), number: '4242424242424241', exp_year: '2001' },
    })
    expect(card.status, card.text).toBe(422)
    expect(card.body.error).toMatchObject({ code: 'parameter_invalid', param: 'card.name' })
    expect(locs(card)).toEqual(['body.card.name', 'body.card.number', 'body.card.exp_year'])
    expect(card.body.error.message).toMatch(/^3 problems: /)
    expect(card.text).not.toContain('4242424242424241')

    const wallet = await create({ type: 'wallet_a', owner: { name: 'N'.repeat(51) } })
    expect(wallet.status, wallet.text).toBe(422)
    expect(locs(wallet)).toEqual(['body.owner.name', 'body.redirect'])

    // a number the schema refuses is not also named as failing the check digit
    const letters = await create({ type: 'card', card: { ...TEST_CARD, number: '424242424242424a', exp_year: '2001' } })
    expect(letters.status, letters.text).toBe(422)
    expect(locs(letters)).toEqual(['body.card.number', 'body.card.exp_year'])
  })

  it('month 0 and month 13 are 422', async () => {
    for (const month of ['0', '00', '13', '99']) {
      expectRefused(await create(withValue(cardBody(), ['card', 'exp_month'], month)), ['body', 'card', 'exp_month'])
    }
  })
})

describe('the source returned', () => {
  // random hex ids and microsecond timestamps may hold any four digits: the code is looked for elsewhere
  const withoutIdsAndTimes = (text: string) =>
    text.replace(/[a-z]+_[0-9a-f]{32}/g, '').replace(/"\d{4}-\d{2}-\d{2}T[\d:.]+Z"/g, '')

  it('shows last4, the brand from the number and never the number or the security code', async () => {
    const cases: [string, string][] = [
      ['4242424242424242', 'visa'],
      ['4111111111111111', 'visa'],
      ['5555555555554444', 'mastercard'],
      ['2223003122003222', 'mastercard'],
      ['378282246310005', 'amex'],
      ['6011111111111117', 'discover'],
      ['3566002020360505', 'jcb'],
      ['36227206271667', 'diners'],
      ['6200000000000005', 'unionpay'],
    ]
    for (const [number, brand] of cases) {
      const res = await create({ type: 'card', card: { ...TEST_CARD, number, cvc: '9817' } })
      expectOk(res)
      const card = res.body.card
      expect(card.object).toBe('card')
      expect(card.id).toMatch(/^card_[0-9a-f]{32}$/)
      expect(card.last4).toBe(number.slice(-4))
      expect(card.brand).toBe(brand)
      expect(card.cvc_checked).toBe('unchecked')
      expect(card.name).toBe(TEST_CARD.name)
      expect(card.exp_month).toBe(TEST_CARD.exp_month)
      expect(card.exp_year).toBe(TEST_CARD.exp_year)
      expect(card).not.toHaveProperty('number')
      expect(card).not.toHaveProperty('cvc')
      expect(res.text).not.toContain(number)
      expect(withoutIdsAndTimes(res.text)).not.toContain('9817')
      const fetched = await t.sk.get(`/v2/sources/${res.body.id}`)
      expect(fetched.text).not.toContain(number)
      expect(withoutIdsAndTimes(fetched.text)).not.toContain('9817')
    }
  })

  it('takes funding, country and issuing bank from the test card table in test mode', async () => {
    for (const tc of TEST_CARDS) {
      const res = await create({ type: 'card', card: { ...TEST_CARD, number: tc.number } })
      expectOk(res)
      expect(res.body.card).toMatchObject({
        last4: tc.number.slice(-4),
        funding: tc.funding,
        country: tc.country,
        issuing_bank: tc.issuing_bank,
      })
    }
    // spot checks of the documented table
    const debitPh = await create({ type: 'card', card: { ...TEST_CARD, number: '5200828282828210' } })
    expect(debitPh.body.card).toMatchObject({ brand: 'mastercard', funding: 'debit', country: 'PH' })
    const prepaid = await create({ type: 'card', card: { ...TEST_CARD, number: '6011111111111117' } })
    expect(prepaid.body.card).toMatchObject({ brand: 'discover', funding: 'prepaid', country: 'US' })
    const other = await create({ type: 'card', card: { ...TEST_CARD, number: '4111111111111111' } })
    expect(other.body.card).toMatchObject({ funding: 'unknown', country: 'unknown', issuing_bank: 'unknown' })
  })

  it('has the source fields: id, type, used and vaulted false, timestamps, metadata', async () => {
    const res = await create({ ...ownerBody(), redirect: { ...REDIRECT } })
    expectOk(res)
    const s = res.body
    expect(s.id).toMatch(/^src_[0-9a-f]{32}$/)
    expect(s.type).toBe('card')
    expect(s.used).toBe(false)
    expect(s.vaulted).toBe(false)
    expect(s.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    expect(s.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    expect(s.metadata).toEqual({})
    expect(s.owner).toEqual({ billing: { name: 'Ann Lee' }, shipping: { name: 'Ann Lee' } })
    expect(s.redirect).toEqual(REDIRECT)
    expect(s.bank_account).toBeUndefined()
  })

  it('livemode is false with a test key and true with a live key', async () => {
    const clients: [Client, boolean][] = [
      [t.sk, false],
      [t.pk, false],
      [t.skLive, true],
      [t.pkLive, true],
    ]
    for (const [c, live] of clients) {
      const card = await create(cardBody(), c)
      expectOk(card)
      expect(card.body.livemode).toBe(live)
      const wallet = await create(walletBody('qr_a'), c)
      expectOk(wallet)
      expect(wallet.body.livemode).toBe(live)
    }
  })
})
