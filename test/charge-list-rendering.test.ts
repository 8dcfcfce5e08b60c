import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import type { Db } from '../src/store/db.js'
import { buildApp, type Client, cardSource, client, type Json, type TestApp, testApp } from './helpers/app.js'

/**
 * A page of charges is served from renderings kept with the row versions they were made from
 * (src/http/rendered.ts). Whatever changes a charge, its source or its refunds, and whichever
 * process changes it, the next page shows the charge exactly as a retrieve does, byte for byte.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp({}, { recovery: { intervalMs: 100, graceMs: 200 } })
})
afterAll(() => t.close())

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

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

  it('a refund written in the store by anything else: the refunds count in the version too', async () => {
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

describe('several processes', () => {
  it('a charge changed through another app on the same store is listed as it is now', async () => {
    const other = await buildApp(t.db, t.vault)
    try {
      const there = client(other.app, t.account.sk_test_key)
      const c = await newCharge({ capture: false })
      // the other app renders the charge first, then this one changes it
      const after = await expectListedAfter(c.id, () => t.sk.post(`/v2/charges/${c.id}/capture`), there)
      expect(after.captured).toBe(true)
    } finally {
      await other.app.close()
    }
  })
})

/** An app on the same store whose statements are recorded. */
async function recordedApp(entries?: number): Promise<{ app: App; as: Client; statements: [string, unknown[]][] }> {
  const statements: [string, unknown[]][] = []
  const db: Db = {
    ...t.db,
    query: (sql, params) => {
      statements.push([sql, params ?? []])
      return t.db.query(sql, params)
    },
    exec: (sql) => t.db.exec(sql),
    transaction: (fn) => t.db.transaction(fn),
    close: async () => {},
  }
  const { app } = await buildApp(db, t.vault, {}, entries === undefined ? {} : { renderedViews: { entries } })
  return { app, as: client(app, t.account.sk_test_key), statements }
}

const detailReads = (statements: [string, unknown[]][]) =>
  statements.filter(([sql]) => sql.includes('json_agg')).map(([, params]) => params[0])

describe('what a page reads', () => {
  it('a page read again unchanged reads only versions; a changed charge alone is read again', async () => {
    await newCharge()
    const c = await newCharge({ capture: false })
    const { app, as, statements } = await recordedApp()
    try {
      const first = await as.get('/v2/charges/?limit=5')
      expect(first.body.data).toHaveLength(5)
      const ids = (first.body.data as Json[]).map((x) => x.id)
      expect(detailReads(statements)).toEqual([expect.arrayContaining(ids)])

      statements.length = 0
      const again = await as.get('/v2/charges/?limit=5')
      expect(again.text).toBe(first.text)
      expect(detailReads(statements)).toEqual([])
      expect(statements).toHaveLength(1)

      await t.sk.post(`/v2/charges/${c.id}/capture`)
      statements.length = 0
      const changed = await as.get('/v2/charges/?limit=5')
      expect(detailReads(statements)).toEqual([[c.id]])
      expect(JSON.stringify(changed.body.data[0])).toBe((await t.sk.get(`/v2/charges/${c.id}`)).text)
    } finally {
      await app.close()
    }
  })

  it('with no renderings kept, every page reads every charge again and answers the same', async () => {
    const { app, as, statements } = await recordedApp(0)
    try {
      const first = await as.get('/v2/charges/?limit=3')
      const again = await as.get('/v2/charges/?limit=3')
      expect(again.text).toBe(first.text)
      expect(detailReads(statements)).toHaveLength(2)
      expect(first.text).toBe((await t.sk.get('/v2/charges/?limit=3')).text)
    } finally {
      await app.close()
    }
  })
})
