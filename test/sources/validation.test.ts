import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Reply, type TestApp, testApp } from '../helpers/app.js'
import { expectRefused } from '../helpers/expect.js'
import {
  at,
  cardBody,
  expectOk,
  type Json,
  ownerBody,
  type Path,
  sourceCreate,
  walletBody,
  without,
  withValue,
} from './source-harness.js'

/**
 * POST /v2/sources/ refused: a character outside pattern P in any field that takes it, a required
 * field missing, an unknown field, a field of the wrong JSON type; each a 422 naming the field.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const create = sourceCreate(() => t)

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

  it("accepts letters, digits, whitespace and the characters ' # _ . - , in every pattern-P field", async () => {
    const allowed = "Aa Zz 09\t'#_.-, x"
    for (const [path, base] of patternFields) {
      const res = await create(withValue(base(), path, allowed))
      expectOk(res)
      expect(at(res.body, path)).toBe(allowed)
    }
  })

  it("accepts every whitespace the interface's \\s matches, line breaks and wide spaces too", async () => {
    // JavaScript's \s, without the unicode flag, as the interface's pattern is validated
    const whitespace = '\n\r\v\f\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff'
    for (const ch of whitespace) {
      const res = await create(withValue(cardBody(), ['card', 'name'], `Ann${ch}Lee`))
      expectOk(res)
      expect(res.body.card.name).toBe(`Ann${ch}Lee`)
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
    // not whitespace to \s: zero-width and joining characters, the next-line control
    '\u200b',
    '\u200d',
    '\u0085',
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

  it('names an enumeration given a value of another type once, with its values', async () => {
    for (const type of [5, true, null, ['card']]) {
      const res = await create({ ...cardBody(), type })
      expectRefused(res, ['body', 'type'], 'parameter_invalid')
      expect(res.body.error.detail, res.text).toHaveLength(1)
      expect(res.body.error.detail[0].msg).toContain('card, wallet_a')
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

describe('a card number where a name or an address goes', () => {
  it('is refused, named and not repeated, in the card, the owner and its addresses', async () => {
    const number = '4111 1111 1111 1111'
    const cases: [Json, Path][] = [
      [withValue(cardBody(), ['card', 'name'], number), ['card', 'name']],
      [
        withValue(cardBody(), ['card', 'address_line1'], `Flat ${number.replace(/ /g, '-')}`),
        ['card', 'address_line1'],
      ],
      [withValue(walletBody(), ['owner'], { name: '4111111111111111' }), ['owner', 'name']],
      [withValue(walletBody(), ['owner'], { billing: { name: 'Ann', line2: number } }), ['owner', 'billing', 'line2']],
    ]
    for (const [body, path] of cases) {
      const res = await create(body)
      expectRefused(res, ['body', ...path], 'parameter_invalid')
      expect(res.body.error.message).toBe(`${path.join('.')} must not hold a card number`)
      expect(res.text).not.toMatch(/4111[ -]?1111[ -]?1111[ -]?1111/)
    }
  })

  it('is found however its groups are split: tabs, doubled spaces, dots, underscores or dashes', async () => {
    for (const split of ['\t', '  ', '_', '.', '-', ' - ', '   ', '--', ' -- ', ',', ', ', "'", '#', ' \t ']) {
      const name = ['4111', '1111', '1111', '1111'].join(split)
      const res = await create(withValue(cardBody(), ['card', 'name'], name))
      expectRefused(res, ['body', 'card', 'name'], 'parameter_invalid')
      expect(res.body.error.message, JSON.stringify(split)).toBe('card.name must not hold a card number')
    }
    // a name with no pattern of characters: split by a line break, other dashes, other punctuation
    for (const split of ['\n', '\u2013', '\u2014', ':', '|', '*', '=', '(', '\u3000']) {
      const name = ['4111', '1111', '1111', '1111'].join(split)
      const res = await create(withValue(walletBody(), ['owner'], { name }))
      expectRefused(res, ['body', 'owner', 'name'], 'parameter_invalid')
    }
    // and an email address made of one
    const email = await create(
      withValue(walletBody(), ['owner'], { billing: { name: 'Ann', email: '4111111111111111@example.com' } }),
    )
    expectRefused(email, ['body', 'owner', 'billing', 'email'], 'parameter_invalid')
  })

  it('is told from a house number, a phone number (which may pass the Luhn check) and digits that fail it', async () => {
    const owner = { billing: { name: 'Ann Lee', line1: '12 High Street', phone_number: '441234567890126' } }
    expectOk(await create(withValue(walletBody(), ['owner'], owner)))
    expectOk(await create(withValue(cardBody(), ['card', 'address_line1'], 'Box 4111 1111 1111 1112')))
    // a block, a lot and a postal code; numbers listed one after another
    expectOk(await create(withValue(cardBody(), ['card', 'address_line1'], '4-12-31, 530-0001')))
    expectOk(await create(withValue(cardBody(), ['card', 'address_line2'], 'Tel 555 1234, ref 4411 12')))
    // and found with a house number after it
    const after = await create(withValue(cardBody(), ['card', 'address_line1'], '4111111111111111 12 Main St'))
    expectRefused(after, ['body', 'card', 'address_line1'], 'parameter_invalid')
  })
})

/** Where each entry of a 422's detail points, as `body.owner.name`. */
const locs = (res: Reply) => res.body.error.detail.map((d: { loc: string[] }) => d.loc.join('.'))

describe('a refused body names the problems only its key tells, beside its schema', () => {
  const overLongName = { name: 'x'.repeat(51) }

  it('a live-mode source with an http redirect', async () => {
    const res = await t.skLive.post(
      '/v2/sources/',
      withValue(withValue(walletBody(), ['redirect', 'success'], 'http://shop.example/ok'), ['owner'], overLongName),
    )
    expect(res.status).toBe(422)
    expect(locs(res)).toEqual(expect.arrayContaining(['body.owner.name', 'body.redirect.success']))
    // in test mode http is fine
    const test = await t.sk.post(
      '/v2/sources/',
      withValue(withValue(walletBody(), ['redirect', 'success'], 'http://shop.example/ok'), ['owner'], overLongName),
    )
    expect(locs(test)).toEqual(['body.owner.name'])
  })

  it('a live-mode charge with an http redirect_url', async () => {
    const body = { amount: 0, currency: 'usd', source: 'src_x', redirect_url: 'http://shop.example/back' }
    const res = await t.skLive.post('/v2/charges/', body)
    expect(res.status).toBe(422)
    expect(locs(res)).toEqual(expect.arrayContaining(['body.amount', 'body.redirect_url']))
    expect(locs(await t.sk.post('/v2/charges/', body))).toEqual(['body.amount'])
  })
})

describe('a notify address at a literal address not allowed', () => {
  const overLongName = { name: 'x'.repeat(51) }
  const notifyAt = (notify: string) => withValue(walletBody(), ['redirect', 'notify'], notify)

  it('is named beside the problems its schema finds, in both modes', async () => {
    for (const address of ['http://10.1.2.3/hook', 'https://[fd00::1]/hook', 'http://[::ffff:192.168.0.1]/']) {
      expect(locs(await create(notifyAt(address))), address).toEqual(['body.redirect.notify'])
      const both = withValue(notifyAt(address), ['owner'], overLongName)
      for (const res of [await t.sk.post('/v2/sources/', both), await t.skLive.post('/v2/sources/', both)]) {
        expect(res.status).toBe(422)
        expect(locs(res), address).toEqual(expect.arrayContaining(['body.owner.name', 'body.redirect.notify']))
        expect(locs(res)).toHaveLength(2)
      }
    }
  })

  it('an address the operator allows, or a public one, is not named', async () => {
    for (const address of ['http://127.0.0.1:9/hook', 'https://93.184.216.34/hook', 'https://receiver.example/hook']) {
      const res = await create(withValue(notifyAt(address), ['owner'], overLongName))
      expect(locs(res), address).toEqual(['body.owner.name'])
    }
  })
})
