import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIRECT, TEST_CARD, type TestApp, testApp } from '../helpers/app.js'
import { expectRefused } from '../helpers/expect.js'
import { SPEC_REDIRECT_TYPES, SPEC_SOURCE_TYPES } from '../helpers/spec.js'
import { expectOk, sourceCreate, walletBody, withValue } from './source-harness.js'

/**
 * Create a source of each type: a card needs a card, every other type a redirect, and where a
 * payer may be sent back to; the OpenAPI document lists the types and pattern P as the interface does.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const create = sourceCreate(() => t)

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
      'https://:@evil.example/ok',
      'https://@evil.example/ok',
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

/** Pattern P as the interface writes it. */
const PATTERN_P_AS_WRITTEN = String.raw`^[A-Za-z0-9\\s\\'#_\\.\\-,]+$`

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
