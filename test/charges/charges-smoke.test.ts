import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

async function charge(source: object, extra: object = {}) {
  const src = await t.sk.post('/v2/sources/', source)
  expect(src.status).toBe(200)
  return t.sk.post('/v2/charges/', { amount: 1000, currency: 'USD', source: src.body.id, ...extra })
}

describe('charges smoke', () => {
  it('card success, refund, list', async () => {
    const c = await charge(cardSource())
    expect(c.status).toBe(201)
    expect(c.body).toMatchObject({ status: 'succeeded', authorized: true, captured: true, currency: 'usd' })
    expect(c.body.source.card.cvc_checked).toBe('pass')
    const r = await t.sk.post(`/v2/charges/${c.body.id}/refund`, { amount: 300 })
    expect(r.status).toBe(200)
    expect(r.body.amount_refunded).toBe(300)
    expect(r.body.refunds).toHaveLength(1)
    const r2 = await t.sk.post(`/v2/charges/${c.body.id}/refund`)
    expect(r2.body.status).toBe('refunded')
    const list = await t.sk.get('/v2/charges/?limit=1')
    expect(list.body.data).toHaveLength(1)
  })
  it('3ds via hosted page', async () => {
    const c = await charge({ ...cardSource({ number: '4000000000003220' }), redirect: REDIRECT })
    expect(c.body.status).toBe('pending')
    const url = new URL(c.body.source.action.url)
    const pageRes = await t.app.inject({ method: 'GET', url: url.pathname + url.search })
    expect(pageRes.statusCode).toBe(200)
    expect(pageRes.body).toContain('3-D Secure')
    const post = await t.app.inject({
      method: 'POST',
      url: url.pathname,
      payload: `token=${url.searchParams.get('token')}&decision=approve`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(post.statusCode).toBe(303)
    expect(post.headers.location).toBe(REDIRECT.success)
    const after = await t.sk.get(`/v2/charges/${c.body.id}`)
    expect(after.body.status).toBe('succeeded')
  })
  it('transfer: link then otp', async () => {
    const cus = await t.sk.post('/v2/customers/', { email: 'a@b.co', description: 'x' })
    const src = await t.sk.post('/v2/sources/', { type: 'transfer_a', redirect: REDIRECT })
    await t.sk.post(`/v2/customers/${cus.body.id}/sources`, { source: src.body.id })
    const c1 = await t.sk.post('/v2/charges/', {
      amount: 500,
      currency: 'php',
      source: src.body.id,
      customer: cus.body.id,
    })
    expect(c1.body.source.action.type).toBe('redirect_to_url')
    const ok = await t.sk.post(`/v2/test/charges/${c1.body.id}/authorize`, { decision: 'approve' })
    expect(ok.body.status).toBe('succeeded')
    expect(ok.body.source.bank_account.bank_code).toBe('JDTB')
    const c2 = await t.sk.post('/v2/charges/', {
      amount: 500,
      currency: 'php',
      source: src.body.id,
      customer: cus.body.id,
      capture: false,
    })
    expect(c2.body.source.action.type).toBe('verify_otp')
    const bad = await t.sk.post(`/v2/charges/${c2.body.id}/verify`, {
      confirmation_id: c2.body.source.action.confirmation_id,
      otp: '1',
    })
    expect(bad.status).toBe(400)
    const v = await t.sk.post(`/v2/charges/${c2.body.id}/verify`, {
      confirmation_id: c2.body.source.action.confirmation_id,
      otp: '123456',
    })
    expect(v.body).toMatchObject({ status: 'succeeded', captured: false })
    const cap = await t.sk.post(`/v2/charges/${c2.body.id}/capture`, { amount: 200 })
    expect(cap.body).toMatchObject({ captured: true, amount: 200 })
    const ev = await t.sk.get('/v2/events/?limit=100')
    expect(ev.body.data.length).toBeGreaterThan(4)
  })
  it('decline is 201 failed', async () => {
    const c = await charge(cardSource({ number: '4000000000009995' }))
    expect(c.status).toBe(201)
    expect(c.body.status).toBe('failed')
    expect(c.body.failure_data.code).toBe('insufficient_funds')
  })
})
