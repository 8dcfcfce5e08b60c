import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type TestApp, testApp } from '../helpers/app.js'
import { expectRefused } from '../helpers/expect.js'
import {
  at,
  cardBody,
  expectOk,
  type Json,
  ownerBody,
  type Path,
  sourceCreate,
  textP,
  thisYear,
  walletBody,
  withValue,
} from './source-harness.js'

/**
 * POST /v2/sources/ against the interface's Limits table: each bound at its edge, which is
 * accepted and returned as sent, and one past it, which is a 422 naming the field.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const create = sourceCreate(() => t)

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
