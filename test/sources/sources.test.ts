import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_CARDS } from '../../src/domain/card.js'
import { type Client, REDIRECT, type Reply, TEST_CARD, type TestApp, testApp } from '../helpers/app.js'
import { SPEC_REDIRECT_TYPES, SPEC_SOURCE_TYPES } from '../helpers/spec.js'

/**
 * POST /v2/sources/ and GET /v2/sources/:id through HTTP: every bound of the interface's Limits
 * table at its edge and one past it, pattern P, required fields, the needs of each source type,
 * the card checks and what a source shows of a card.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

type Json = Record<string, unknown>
type Path = string[]

/** Pattern P as the interface writes it, its `\s` narrowed to the space and the tab (docs/api.md). */
const PATTERN_P_AS_WRITTEN = String.raw`^[A-Za-z0-9 \\t\\'#_\\.\\-,]+$`

const thisYear = new Date().getUTCFullYear()
const thisMonth = new Date().getUTCMonth() + 1

const clone = <T>(v: T): T => structuredClone(v)

function at(obj: unknown, path: Path): unknown {
  let cur = obj
  for (const key of path) cur = (cur as Json | undefined)?.[key]
  return cur
}

function withValue(body: Json, path: Path, value: unknown): Json {
  const copy = clone(body)
  let cur = copy
  for (const key of path.slice(0, -1)) {
    cur[key] ??= {}
    cur = cur[key] as Json
  }
  cur[path[path.length - 1] as string] = value
  return copy
}

function without(body: Json, path: Path): Json {
  const copy = clone(body)
  const parent = at(copy, path.slice(0, -1)) as Json
  delete parent[path[path.length - 1] as string]
  return copy
}

/** A string of exactly n characters, all allowed by pattern P, mixing its character classes. */
function textP(n: number): string {
  const filler = "Ann O'Neil-Lee, 5th #2_b. "
  return filler.repeat(Math.ceil(n / filler.length) + 1).slice(0, n)
}

/** A card number of `length` digits that passes the Luhn check. */
function luhnNumber(prefix: string, length: number): string {
  const body = prefix.padEnd(length - 1, '0')
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i])
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return body + String((10 - (sum % 10)) % 10)
}

const cardBody = (): Json => ({ type: 'card', card: { ...TEST_CARD } })
const walletBody = (type = 'wallet_a'): Json => ({ type, redirect: { ...REDIRECT } })
const ownerBody = (): Json => ({
  ...cardBody(),
  owner: { billing: { name: 'Ann Lee' }, shipping: { name: 'Ann Lee' } },
})

const create = (body: unknown, c: Client = t.sk) => c.post('/v2/sources/', body)

function expectOk(res: Reply) {
  expect(res.status, res.text).toBe(200)
  expect(res.body.object).toBe('source')
}

/** A 422 in the one envelope whose detail points at the field. */
function expectRefused(res: Reply, loc: (string | number)[], code?: string) {
  expect(res.status, res.text).toBe(422)
  expect(res.body.error.type).toMatch(/^(invalid_request_error|card_error)$/)
  if (code) expect(res.body.error.code).toBe(code)
  expect(Array.isArray(res.body.error.detail)).toBe(true)
  expect(res.body.error.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc)
}

describe('Limits table: each bound at its edge and one past it', () => {
  // [path, min, max, body to put it in]
  const bounded: [Path, number, number, () => Json][] = [
    [['card', 'name'], 1, 50, cardBody],
    [['card', 'address_line1'], 1, 255, cardBody],
    [['card', 'address_line2'], 1, 255, cardBody],
    [['card', 'address_city'], 1, 255, cardBody],
    [['card', 'address_state'], 1, 255, cardBody],
    [['card', 'address_country'], 1, 255, cardBody],
    [['card', 'address_zip'], 1, 50, cardBody],
    ...(['billing', 'shipping'] as const).flatMap((part): [Path, number, number, () => Json][] => [
      [['owner', part, 'name'], 1, 50, ownerBody],
      [['owner', part, 'phone_number'], 1, 50, ownerBody],
      [['owner', part, 'state'], 1, 50, ownerBody],
      [['owner', part, 'country'], 1, 50, ownerBody],
      [['owner', part, 'zip_code'], 1, 50, ownerBody],
      [['owner', part, 'line1'], 1, 255, ownerBody],
      [['owner', part, 'line2'], 1, 255, ownerBody],
      [['owner', part, 'city'], 1, 100, ownerBody],
    ]),
    [['owner', 'address_country'], 1, 50, ownerBody],
  ]

  for (const [path, min, max, base] of bounded) {
    const name = path.join('.')
    it(`${name}: ${min} and ${max} characters pass and are returned; ${min - 1} and ${max + 1} are 422`, async () => {
      for (const n of [min, max]) {
        const value = textP(n)
        const res = await create(withValue(base(), path, value))
        expectOk(res)
        expect(at(res.body, path)).toBe(value)
      }
      for (const n of [min - 1, max + 1]) {
        const res = await create(withValue(base(), path, textP(n)))
        expectRefused(res, ['body', ...path], 'parameter_invalid')
        expect(res.body.error.param).toBe(name)
      }
    })
  }

  it('owner.name: at most 50 characters, no lower bound and no pattern', async () => {
    for (const value of ['', 'x'.repeat(50), 'José Ñúñez-Ø (née Smith)']) {
      const res = await create(withValue(ownerBody(), ['owner', 'name'], value))
      expectOk(res)
      expect(res.body.owner.name).toBe(value)
    }
    expectRefused(await create(withValue(ownerBody(), ['owner', 'name'], 'x'.repeat(51))), ['body', 'owner', 'name'])
  })

  it('card.exp_month: 1 and 2 characters pass; 0 and 3 characters are 422', async () => {
    for (const month of ['1', '12', '09']) {
      const res = await create(withValue(cardBody(), ['card', 'exp_month'], month))
      expectOk(res)
      expect(res.body.card.exp_month).toBe(month)
    }
    for (const month of ['', '012', '123']) {
      expectRefused(await create(withValue(cardBody(), ['card', 'exp_month'], month)), ['body', 'card', 'exp_month'])
    }
  })

  it('card.exp_year: exactly 4 characters; 3 and 5 are 422', async () => {
    const year = String(thisYear + 5)
    const ok = await create(withValue(cardBody(), ['card', 'exp_year'], year))
    expectOk(ok)
    expect(ok.body.card.exp_year).toBe(year)
    for (const bad of [year.slice(1), `${year}0`, '']) {
      expectRefused(await create(withValue(cardBody(), ['card', 'exp_year'], bad)), ['body', 'card', 'exp_year'])
    }
  })

  it('card.cvc: 3 and 4 characters pass; 2 and 5 are 422', async () => {
    for (const cvc of ['123', '1234']) expectOk(await create(withValue(cardBody(), ['card', 'cvc'], cvc)))
    for (const cvc of ['12', '12345', '']) {
      expectRefused(await create(withValue(cardBody(), ['card', 'cvc'], cvc)), ['body', 'card', 'cvc'])
    }
  })

  for (const field of ['success', 'fail', 'notify']) {
    it(`redirect.${field}: a uri of 2083 characters passes; 2084 characters, empty and a non-uri are 422`, async () => {
      const prefix = 'https://shop.example/return/'
      const long = (n: number) => prefix + 'a'.repeat(n - prefix.length)
      expect(long(2083)).toHaveLength(2083)
      const ok = await create(withValue(walletBody(), ['redirect', field], long(2083)))
      expectOk(ok)
      expect(ok.body.redirect[field]).toBe(long(2083))
      const short = await create(withValue(walletBody(), ['redirect', field], 'https://a.io'))
      expectOk(short)
      for (const bad of [long(2084), '', 'not a uri', 'shop.example/ok']) {
        expectRefused(await create(withValue(walletBody(), ['redirect', field], bad)), ['body', 'redirect', field])
      }
    })
  }

  it('owner address email must be an email address', async () => {
    const ok = await create(withValue(ownerBody(), ['owner', 'billing', 'email'], 'ann.lee@example.com'))
    expectOk(ok)
    expect(ok.body.owner.billing.email).toBe('ann.lee@example.com')
    for (const bad of ['ann.lee', 'ann@', '@example.com', 'ann lee@example.com']) {
      expectRefused(await create(withValue(ownerBody(), ['owner', 'shipping', 'email'], bad)), [
        'body',
        'owner',
        'shipping',
        'email',
      ])
    }
  })
})

describe('pattern P', () => {
  const patternFields: [Path, () => Json][] = [
    [['card', 'name'], cardBody],
    [['card', 'address_line1'], cardBody],
    [['card', 'address_line2'], cardBody],
    [['card', 'address_city'], cardBody],
    [['card', 'address_state'], cardBody],
    [['card', 'address_country'], cardBody],
    [['card', 'address_zip'], cardBody],
    [['owner', 'address_country'], ownerBody],
    ...['name', 'phone_number', 'line1', 'line2', 'city', 'state', 'country', 'zip_code'].flatMap(
      (f): [Path, () => Json][] => [
        [['owner', 'billing', f], ownerBody],
        [['owner', 'shipping', f], ownerBody],
      ],
    ),
  ]

  it("accepts letters, digits, the space, the tab and the characters ' # _ . - , in every pattern-P field", async () => {
    const allowed = "Aa Zz 09\t'#_.-, x"
    for (const [path, base] of patternFields) {
      const res = await create(withValue(base(), path, allowed))
      expectOk(res)
      expect(at(res.body, path)).toBe(allowed)
    }
  })

  const refused = [
    '$',
    '@',
    '!',
    '/',
    ';',
    ':',
    '<',
    '>',
    '"',
    '\\',
    '(',
    ')',
    '&',
    '*',
    '+',
    '=',
    '?',
    '%',
    '~',
    '`',
    '|',
    '{',
    '}',
    '[',
    ']',
    '^',
    'é',
    'ñ',
    'ß',
    '中',
    '😀',
    '\u0000',
    // whitespace other than the space and the tab: line breaks, no-break and wide spaces, the BOM
    '\n',
    '\r',
    '\v',
    '\f',
    '\u0085',
    '\u00a0',
    '\u1680',
    '\u2000',
    '\u2028',
    '\u2029',
    '\u202f',
    '\u3000',
    '\ufeff',
  ]

  it('refuses every other character in card.name', async () => {
    for (const ch of refused) {
      const res = await create(withValue(cardBody(), ['card', 'name'], `Ann${ch}Lee`))
      expectRefused(res, ['body', 'card', 'name'], 'parameter_invalid')
      expect(res.body.error.detail[0].type).toBe('pattern')
    }
  })

  it('refuses a character outside P in every pattern-P field', async () => {
    for (const [path, base] of patternFields) {
      for (const ch of ['$', '@', 'é', '<']) {
        expectRefused(
          await create(withValue(base(), path, `12 Main${ch}Street`)),
          ['body', ...path],
          'parameter_invalid',
        )
      }
    }
  })

  it('lists one detail entry per violation', async () => {
    const body = withValue(withValue(cardBody(), ['card', 'name'], 'Ann$'), ['card', 'address_city'], 'x'.repeat(256))
    const res = await create(body)
    expect(res.status).toBe(422)
    const locs = res.body.error.detail.map((d: { loc: unknown }) => d.loc)
    expect(locs).toContainEqual(['body', 'card', 'name'])
    expect(locs).toContainEqual(['body', 'card', 'address_city'])
  })
})

describe('required fields', () => {
  const required: [Path, () => Json][] = [
    [['type'], cardBody],
    [['card', 'name'], cardBody],
    [['card', 'number'], cardBody],
    [['card', 'exp_month'], cardBody],
    [['card', 'exp_year'], cardBody],
    [['card', 'cvc'], cardBody],
    [['redirect', 'success'], walletBody],
    [['redirect', 'fail'], walletBody],
    [['owner', 'billing', 'name'], () => withValue(cardBody(), ['owner', 'billing'], { city: 'Manila' })],
    [['owner', 'shipping', 'name'], () => withValue(cardBody(), ['owner', 'shipping'], { line1: '1 Main St' })],
  ]
  for (const [path, base] of required) {
    it(`${path.join('.')} missing is 422 parameter_missing pointing at it`, async () => {
      const res = await create(without(base(), path))
      expectRefused(res, ['body', ...path], 'parameter_missing')
      expect(res.body.error.param).toBe(path.join('.'))
      expect(res.body.error.message).toContain(path.join('.'))
    })
  }

  it('an absent or empty body is 422', async () => {
    // the test client sends {} for an undefined body; an empty text is no body at all
    const none = await t.sk.post('/v2/sources/', '')
    expect(none.status).toBe(422)
    expect(none.body.error.detail[0].loc).toEqual(['body'])
    expectRefused(await create({}), ['body', 'type'], 'parameter_missing')
  })

  it('an unknown field, at the top or nested, is 422 parameter_unknown', async () => {
    const cases: [Json, Path][] = [
      [withValue(cardBody(), ['amount'], 100), ['amount']],
      [withValue(cardBody(), ['card', 'number_2'], '1'), ['card', 'number_2']],
      [withValue(walletBody(), ['redirect', 'cancel'], 'https://shop.example/c'), ['redirect', 'cancel']],
      [withValue(ownerBody(), ['owner', 'phone'], '123'), ['owner', 'phone']],
      [withValue(ownerBody(), ['owner', 'billing', 'zip'], '123'), ['owner', 'billing', 'zip']],
    ]
    for (const [body, path] of cases) {
      const res = await create(body)
      expectRefused(res, ['body', ...path], 'parameter_unknown')
      expect(res.body.error.param).toBe(path.join('.'))
    }
  })

  it('a field of the wrong JSON type is 422', async () => {
    expectRefused(await create(withValue(cardBody(), ['card', 'exp_month'], 12)), ['body', 'card', 'exp_month'])
    expectRefused(await create(withValue(cardBody(), ['card', 'number'], 4242424242424242)), ['body', 'card', 'number'])
    expectRefused(await create(withValue(cardBody(), ['card'], null)), ['body', 'card'])
  })
})

describe('what each source type needs', () => {
  it('type must be one of the nine', async () => {
    for (const type of ['wallet_f', 'CARD', 'bank_account', '']) {
      expectRefused(await create({ type, redirect: { ...REDIRECT } }), ['body', 'type'], 'parameter_invalid')
    }
  })

  it('card needs card', async () => {
    const res = await create({ type: 'card' })
    expectRefused(res, ['body', 'card'], 'parameter_missing')
    expectRefused(await create({ type: 'card', redirect: { ...REDIRECT } }), ['body', 'card'], 'parameter_missing')
  })

  for (const type of SPEC_REDIRECT_TYPES) {
    it(`${type} needs redirect and refuses card`, async () => {
      const ok = await create(walletBody(type))
      expectOk(ok)
      expect(ok.body.type).toBe(type)
      expect(ok.body.redirect).toEqual(REDIRECT)
      expect(ok.body.card).toBeUndefined()
      expect(ok.body.used).toBe(false)
      expect(ok.body.vaulted).toBe(false)

      expectRefused(await create({ type }), ['body', 'redirect'], 'parameter_missing')
      const withCard = await create({ ...walletBody(type), card: { ...TEST_CARD } })
      expectRefused(withCard, ['body', 'card'])
      expect(withCard.body.error.param).toBe('card')
    })
  }

  it('refuses a redirect to a javascript: or data: address', async () => {
    for (const bad of ['javascript:alert(1)', 'data:text/html,hi']) {
      expectRefused(await create(withValue(walletBody(), ['redirect', 'success'], bad)), [
        'body',
        'redirect',
        'success',
      ])
    }
  })

  it('sends a payer to https addresses only, and to http ones in test mode', async () => {
    const refusedEverywhere = [
      'intent://pay#Intent;scheme=bank;end',
      'blob:https://shop.example/0f3c',
      'x:y',
      'http:evil.example',
      'https:evil.example',
      'http:/evil.example',
      'ftp://shop.example/ok',
      'ws://shop.example/ok',
      'https://user:pw@shop.example/ok',
      'https://shop.example@evil.example/ok',
    ]
    for (const field of ['success', 'fail']) {
      for (const key of [t.pk, t.pkLive]) {
        for (const bad of refusedEverywhere) {
          const res = await create(withValue(walletBody(), ['redirect', field], bad), key)
          expectRefused(res, ['body', 'redirect', field], 'parameter_invalid')
        }
        expectOk(await create(withValue(walletBody(), ['redirect', field], 'HTTPS://shop.example/ok?x=1'), key))
      }
      const http = withValue(walletBody(), ['redirect', field], 'http://shop.example/ok')
      expectOk(await create(http, t.pk))
      const live = await create(http, t.pkLive)
      expectRefused(live, ['body', 'redirect', field], 'parameter_invalid')
      expect(live.body.error.message).toBe(`redirect.${field} must be an https URL in live mode`)
    }
  })
})

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

describe('GET /v2/sources/:id', () => {
  it('returns the source as created, with a secret or a public key', async () => {
    const created = await create({ ...ownerBody() })
    expectOk(created)
    for (const c of [t.sk, t.pk]) {
      const res = await c.get(`/v2/sources/${created.body.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual(created.body)
    }
    const noSlash = await t.sk.get(`/v2/sources/${created.body.id}/`)
    expect(noSlash.status).toBe(200)
  })

  it('the answer to a create is what the store gives back, for every type with every optional part', async () => {
    const address = {
      name: 'Ann Lee',
      phone_number: '555 0100',
      email: 'ann@example.com',
      line1: '1 Main St',
      line2: 'Flat 2',
      city: 'Springfield',
      state: 'IL',
      country: 'US',
      zip_code: '62701',
    }
    const owner = { billing: address, shipping: { ...address, name: 'Bo Lee' }, name: 'Ann Lee', address_country: 'US' }
    const card = {
      ...TEST_CARD,
      address_line1: '1 Main St',
      address_line2: 'Flat 2',
      address_city: 'Springfield',
      address_state: 'IL',
      address_country: 'US',
      address_zip: '62701',
    }
    for (const type of SPEC_SOURCE_TYPES) {
      const body =
        type === 'card'
          ? { type, card, owner }
          : { type, redirect: { ...REDIRECT, notify: 'https://shop.example/notify' }, owner }
      const created = await create(body)
      expectOk(created)
      expect(created.body.owner).toEqual(owner)
      const read = await t.sk.get(`/v2/sources/${created.body.id}`)
      expect(read.status).toBe(200)
      expect(read.body, type).toEqual(created.body)
      expect(Object.keys(read.body), type).toEqual(Object.keys(created.body))
    }
  })

  it('an unknown id is 404 resource_missing', async () => {
    for (const id of ['src_00000000000000000000000000000000', 'nope']) {
      const res = await t.sk.get(`/v2/sources/${id}`)
      expect(res.status).toBe(404)
      expect(res.body.error.type).toBe('not_found_error')
      expect(res.body.error.code).toBe('resource_missing')
    }
  })
})

describe('the OpenAPI document', () => {
  it('lists the source types in the order of the interface', async () => {
    const res = await t.anon.get('/v2/openapi.json')
    expect(res.status).toBe(200)
    const op = res.body.paths['/v2/sources/'].post
    expect(op.requestBody.content['application/json'].schema.properties.type.enum).toEqual(SPEC_SOURCE_TYPES)
    expect(op.responses['200'].content['application/json'].schema.properties.type.enum).toEqual(SPEC_SOURCE_TYPES)
  })

  it('writes pattern P exactly as the interface does', async () => {
    const res = await t.anon.get('/v2/openapi.json')
    // the JSON text carries the interface's characters verbatim
    expect(res.text).toContain(`"pattern":"${PATTERN_P_AS_WRITTEN}"`)
    const schema = res.body.paths['/v2/sources/'].post.requestBody.content['application/json'].schema
    const asValue = JSON.parse(`"${PATTERN_P_AS_WRITTEN}"`)
    expect(schema.properties.card.properties.name.pattern).toBe(asValue)
    expect(schema.properties.card.properties.address_zip.pattern).toBe(asValue)
    expect(schema.properties.owner.properties.address_country.pattern).toBe(asValue)
    expect(schema.properties.owner.properties.billing.properties.city.pattern).toBe(asValue)
    // and the regular expression it describes is the one enforced
    const re = new RegExp(asValue)
    expect(re.test("Ann O'Neil #2_b.-,")).toBe(true)
    expect(re.test('Ann$')).toBe(false)
  })
})
