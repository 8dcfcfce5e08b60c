import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type TestApp, testApp } from '../helpers/app.js'

/**
 * An Idempotency-Key is kept 24 hours from its first request. Within them a retry of that request
 * carries on with what its first attempt made; after them the key names a new request, and finds
 * nothing of the old one: not the charge, refund or source its attempts made, nor the capture or
 * void they began.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const HOUR = 3600

async function advance(seconds: number) {
  const res = await t.sk.post('/v2/test/clock/advance', { seconds })
  expect(res.status, res.text).toBe(200)
}

const withKey = (key: string, fault?: string) => ({
  'idempotency-key': key,
  ...(fault ? { 'jackdaw-test-fault': fault } : {}),
})

async function authorized(): Promise<{ id: string }> {
  const src = await t.sk.post('/v2/sources/', cardSource())
  const res = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture: false })
  expect(res.status, res.text).toBe(201)
  return res.body
}

describe('a capture or void key', () => {
  it('resumes its own operation within 24 hours, and after them is a new request', async () => {
    const ch = await authorized()
    const timedOut = await t.sk.post(`/v2/charges/${ch.id}/capture`, {}, withKey('cap-1', 'processor_timeout'))
    expect(timedOut.status, timedOut.text).toBeGreaterThanOrEqual(500)
    await advance(23 * HOUR)
    const retried = await t.sk.post(`/v2/charges/${ch.id}/capture`, {}, withKey('cap-1'))
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body.captured).toBe(true)

    await advance(2 * HOUR)
    const voided = await t.sk.post(`/v2/charges/${ch.id}/void`, {}, withKey('cap-1'))
    expect(voided.status, voided.text).toBe(400)
    expect(voided.body.error.code).toBe('charge_not_voidable')
  })

  it('sent again after 24 hours with another amount is checked as any capture', async () => {
    const ch = await authorized()
    const first = await t.sk.post(`/v2/charges/${ch.id}/capture`, { amount: 300 }, withKey('cap-2'))
    expect(first.status, first.text).toBe(200)
    await advance(25 * HOUR)
    const again = await t.sk.post(`/v2/charges/${ch.id}/capture`, { amount: 900 }, withKey('cap-2'))
    expect(again.status, again.text).toBe(400)
    expect(again.body.error.code).toBe('charge_not_capturable')
    expect((await t.sk.get(`/v2/charges/${ch.id}`)).body.amount).toBe(300)
  })
})

describe('an attach key', () => {
  it('is answered from its first request within 24 hours; after them it is a new attach, of a used source', async () => {
    const cus = await t.sk.post('/v2/customers/', { email: 'attach.key@example.com', description: 'Holder' })
    const src = await t.sk.post('/v2/sources/', cardSource())
    const attach = () => t.sk.post(`/v2/customers/${cus.body.id}/sources`, { source: src.body.id }, withKey('attach-1'))
    const first = await attach()
    expect(first.status, first.text).toBe(200)
    await advance(23 * HOUR)
    const replayed = await attach()
    expect(replayed.status).toBe(200)
    expect(replayed.headers['idempotent-replayed']).toBe('true')
    expect(replayed.body).toEqual(first.body)

    await advance(2 * HOUR)
    const fresh = await attach()
    expect(fresh.status, fresh.text).toBe(400)
    expect(fresh.body.error.code).toBe('source_used')
    expect(fresh.headers['idempotent-replayed']).toBeUndefined()
    expect((await t.sk.get(`/v2/customers/${cus.body.id}`)).body.sources.map((s: { id: string }) => s.id)).toEqual([
      src.body.id,
    ])
  })
})

describe('a key whose first attempt failed, retried later', () => {
  it('a create: after 24 hours from its first attempt the key makes a new charge', async () => {
    const a = await t.sk.post('/v2/sources/', cardSource())
    const b = await t.sk.post('/v2/sources/', cardSource({ number: '5555555555554444' }))
    const bodyA = { amount: 1111, currency: 'usd', source: a.body.id }
    expect((await t.sk.post('/v2/charges/', bodyA, withKey('create-1', 'error_before_commit'))).status).toBe(500)
    await advance(HOUR)
    const made = await t.sk.post('/v2/charges/', bodyA, withKey('create-1'))
    expect(made.status, made.text).toBe(201)

    await advance(23 * HOUR + 30 * 60)
    const bodyB = { amount: 2222, currency: 'eur', source: b.body.id }
    const fresh = await t.sk.post('/v2/charges/', bodyB, withKey('create-1'))
    expect(fresh.status, fresh.text).toBe(201)
    expect(fresh.body.id).not.toBe(made.body.id)
    expect(fresh.body).toMatchObject({ amount: 2222, currency: 'eur', status: 'succeeded' })
    expect(fresh.body.source.id).toBe(b.body.id)
  })

  it('a refund: after 24 hours from its first attempt the key makes a new refund', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const ch = (await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })).body
    const refund = (amount: number, fault?: string) =>
      t.sk.post(`/v2/charges/${ch.id}/refund`, { amount }, withKey('refund-1', fault))
    expect((await refund(100, 'error_before_commit')).status).toBe(500)
    await advance(HOUR)
    expect((await refund(100)).status).toBe(200)

    await advance(23 * HOUR + 30 * 60)
    const fresh = await refund(300)
    expect(fresh.status, fresh.text).toBe(200)
    expect(fresh.body.amount_refunded).toBe(400)
    expect(fresh.body.refunds.map((r: { amount: number }) => r.amount)).toEqual([100, 300])
  })

  it('a source: after 24 hours from its first attempt the key makes a new source', async () => {
    const first = cardSource()
    expect((await t.sk.post('/v2/sources/', first, withKey('source-1', 'error_before_commit'))).status).toBe(500)
    await advance(HOUR)
    const made = await t.sk.post('/v2/sources/', first, withKey('source-1'))
    expect(made.status, made.text).toBe(200)

    await advance(23 * HOUR + 30 * 60)
    const fresh = await t.sk.post('/v2/sources/', cardSource({ number: '5555555555554444' }), withKey('source-1'))
    expect(fresh.status, fresh.text).toBe(200)
    expect(fresh.body.id).not.toBe(made.body.id)
    expect(fresh.body.card.last4).toBe('4444')
  })
})
