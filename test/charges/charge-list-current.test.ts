import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, type Json, type TestApp, testApp } from '../helpers/app.js'

/**
 * Whatever changes a charge, its source or its refunds, the next page of charges shows the charge
 * exactly as a retrieve does, byte for byte.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp({}, { recovery: { intervalMs: 100, graceMs: 200 } })
})
afterAll(() => t.close())

async function newCharge(body: Record<string, unknown> = {}, as: Client = t.sk): Promise<Json> {
  const src = await as.post('/v2/sources/', cardSource())
  const res = await as.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, ...body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

/** The charge as the first page lists it, in the text the list gave it. */
async function listed(id: string, as: Client = t.sk): Promise<string> {
  const page = await as.get('/v2/charges/?limit=100')
  expect(page.status).toBe(200)
  const item = (page.body.data as Json[]).find((c) => c.id === id)
  expect(item, `${id} is on the page`).toBeDefined()
  return JSON.stringify(item)
}

/** Lists, runs the change, lists again: the second page shows what a retrieve shows. */
async function expectListedAfter(id: string, change: () => Promise<unknown>, as: Client = t.sk): Promise<Json> {
  const before = await listed(id, as)
  await change()
  const after = await listed(id, as)
  const retrieved = await as.get(`/v2/charges/${id}`)
  expect(after).toBe(retrieved.text)
  expect(after).not.toBe(before)
  return JSON.parse(after)
}

describe('a listed charge after each kind of change', () => {
  it('capture', async () => {
    const c = await newCharge({ capture: false })
    const after = await expectListedAfter(c.id, () => t.sk.post(`/v2/charges/${c.id}/capture`, { amount: 600 }))
    expect(after).toMatchObject({ captured: true, amount: 600 })
  })

  it('void', async () => {
    const c = await newCharge({ capture: false })
    const after = await expectListedAfter(c.id, () => t.sk.post(`/v2/charges/${c.id}/void`))
    expect(after.status).toBe('voided')
  })

  it('a partial refund, then the rest', async () => {
    const c = await newCharge()
    const first = await expectListedAfter(c.id, () => t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 300 }))
    expect(first.refunds).toHaveLength(1)
    const second = await expectListedAfter(c.id, () => t.sk.post(`/v2/charges/${c.id}/refund`))
    expect(second).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
    expect(second.refunds).toHaveLength(2)
  })

  it("the payer's answer to 3-D Secure", async () => {
    const src = await t.sk.post('/v2/sources/', cardSource({ number: '4000000000003220' }))
    const c = (await t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id })).body
    expect(c.status).toBe('pending')
    const after = await expectListedAfter(c.id, () =>
      t.sk.post(`/v2/test/charges/${c.id}/authorize`, { decision: 'approve' }),
    )
    expect(after.status).toBe('succeeded')
    expect(after.source.action).toBeUndefined()
  })

  it('its vaulted source detached from the customer: the charge shows its source as it is now', async () => {
    const src = (await t.sk.post('/v2/sources/', cardSource())).body
    const cus = (await t.sk.post('/v2/customers/', { email: 'vault@example.com', description: 'Vault' })).body
    expect((await t.sk.post(`/v2/customers/${cus.id}/sources`, { source: src.id })).status).toBe(200)
    const res = await t.sk.post('/v2/charges/', { amount: 400, currency: 'usd', source: src.id, customer: cus.id })
    expect(res.status, res.text).toBe(201)
    const detached = await expectListedAfter(res.body.id, () =>
      t.sk.delete(`/v2/customers/${cus.id}/sources/${src.id}`),
    )
    expect(detached.source.vaulted).toBe(false)
  })

  it('a refund written in the store by anything else', async () => {
    const c = await newCharge()
    await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 100 })
    const after = await expectListedAfter(c.id, () =>
      t.db.query(`UPDATE refunds SET reason = 'fraudulent' WHERE charge_id = $1`, [c.id]),
    )
    expect(after.refunds[0].reason).toBe('fraudulent')
  })

  it('a pending refund that the recovery sweep claims and settles', async () => {
    const c = await newCharge()
    await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 250 })
    // as a process that died before the processor answered would leave it
    await t.db.query(
      "UPDATE refunds SET status = 'pending', updated_at = now() - interval '1 minute' WHERE charge_id = $1",
      [c.id],
    )
    expect(JSON.parse(await listed(c.id)).refunds[0].status).toBe('pending')
    let shown: Json
    for (let i = 0; i < 200; i++) {
      shown = JSON.parse(await listed(c.id))
      if (shown.refunds[0].status === 'succeeded') break
      await sleep(50)
    }
    expect(shown.refunds[0].status).toBe('succeeded')
    expect(JSON.stringify(shown)).toBe((await t.sk.get(`/v2/charges/${c.id}`)).text)
  })
})

describe('a customer updated by many requests at once', () => {
  it('has every update applied, as if one after another', async () => {
    const c = (await t.sk.post('/v2/customers/', { email: 'many@example.com', description: 'New' })).body
    const replies = await Promise.all([
      t.sk.put(`/v2/customers/${c.id}`, { description: 'Customer' }),
      t.sk.put(`/v2/customers/${c.id}`, { mobile_number: '+447000000001' }),
      t.sk.put(`/v2/customers/${c.id}`, { metadata: { n: 1 } }),
    ])
    for (const r of replies) expect(r.status, r.text).toBe(200)
    expect((await t.sk.get(`/v2/customers/${c.id}`)).body).toMatchObject({
      description: 'Customer',
      mobile_number: '+447000000001',
      metadata: { n: 1 },
    })
  })
})
