import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIRECT, TEST_CARD, type TestApp, testApp } from '../helpers/app.js'
import { SPEC_SOURCE_TYPES } from '../helpers/spec.js'
import { expectOk, ownerBody, sourceCreate } from './source-harness.js'

/**
 * GET /v2/sources/:id: the source as created, for every type with every optional part, with a
 * secret or a public key; an unknown id is 404.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())
const create = sourceCreate(() => t)

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
