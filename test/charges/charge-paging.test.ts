import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, client, type Json, REDIRECT, type Reply, type TestApp, testApp } from '../helpers/app.js'

/**
 * Listing charges: newest first, keyset pages that neither skip nor repeat a charge while other
 * charges are being created, `next` as the relative path of the next page.
 */

const FIXTURE = 250
const BATCH = 25

let t: TestApp
/** ids of the charges made before any paging, newest first */
let existing: string[]
let fixtureMs = 0
/** ids of the charges the concurrent inserters made, in every test */
const inserted = new Set<string>()

/** Every 10th charge is declined and every 10th (offset 5) waits for the payer: all are listed. */
function sourceFor(i: number): object {
  if (i % 10 === 3) return cardSource({ number: '4000000000000002' })
  if (i % 10 === 5) return { type: 'wallet_a', redirect: REDIRECT }
  return cardSource()
}

async function makeCharge(i: number): Promise<string> {
  const src = await t.sk.post('/v2/sources/', sourceFor(i))
  expect(src.status).toBe(200)
  const c = await t.sk.post('/v2/charges/', { amount: 100 + i, currency: 'usd', source: src.body.id })
  expect(c.status, JSON.stringify(c.body)).toBe(201)
  return c.body.id
}

beforeAll(async () => {
  t = await testApp()
  const started = performance.now()
  const ids: string[] = []
  for (let b = 0; b < FIXTURE; b += BATCH) {
    ids.push(...(await Promise.all(Array.from({ length: Math.min(BATCH, FIXTURE - b) }, (_, k) => makeCharge(b + k)))))
  }
  fixtureMs = performance.now() - started
  existing = [...ids].sort().reverse()
  console.info(`charge-paging: ${FIXTURE} charges created in ${Math.round(fixtureMs)} ms`)
}, 120_000)
afterAll(() => t.close())

/** Keeps creating charges until stopped, as other clients of the service would. */
function inserter() {
  let stop = false
  const made: string[] = []
  const done = (async () => {
    let i = 0
    while (!stop) {
      const batch = await Promise.all([makeCharge(1000 + i), makeCharge(1001 + i)])
      made.push(...batch)
      for (const id of batch) inserted.add(id)
      i += 2
    }
  })()
  return {
    made,
    async stop() {
      stop = true
      await done
    },
  }
}

interface Walk {
  ids: string[]
  pages: Reply[]
}

/** Follows `next` from the first page to the last; `between` runs after each page but the last. */
async function walk(first: string, between?: (pagesSoFar: number) => Promise<void>): Promise<Walk> {
  const ids: string[] = []
  const pages: Reply[] = []
  let path: string | null = first
  while (path !== null) {
    const res: Reply = await t.sk.get(path)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.object).toBe('list')
    pages.push(res)
    ids.push(...res.body.data.map((c: Json) => c.id))
    path = res.body.next
    expect(pages.length).toBeLessThan(2000)
    if (path !== null && between) await between(pages.length)
  }
  return { ids, pages }
}

function expectStrictlyDescending(ids: string[]) {
  for (let i = 1; i < ids.length; i++) {
    if (!((ids[i - 1] as string) > (ids[i] as string))) {
      throw new Error(`ids out of order at ${i}: ${ids[i - 1]} then ${ids[i]}`)
    }
  }
}

describe('paging through charges', () => {
  it('the fixture is in place, and fast enough to make', () => {
    expect(existing).toHaveLength(FIXTURE)
    expect(new Set(existing).size).toBe(FIXTURE)
    expect(fixtureMs).toBeLessThan(60_000)
  })

  it.each([1, 7, 100])(
    'limit %i while charges are being created: every earlier charge exactly once, newest first',
    async (limit) => {
      const others = inserter()
      let result: Walk
      try {
        // besides the background inserts, one charge is surely created between pages
        let n = 0
        result = await walk(`/v2/charges/?limit=${limit}`, async (pagesSoFar) => {
          if (limit > 1 || pagesSoFar % 5 === 0) inserted.add(await makeCharge(2000 + n++))
        })
      } finally {
        await others.stop()
      }
      const { ids, pages } = result
      // the pages went on while charges were created
      expect(others.made.length).toBeGreaterThan(0)

      expectStrictlyDescending(ids)
      const seen = new Map<string, number>()
      for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1)
      for (const id of existing) expect(seen.get(id), id).toBe(1)
      // nothing seen that this account did not create
      const known = new Set([...existing, ...inserted])
      expect(ids.filter((id) => !known.has(id))).toEqual([])

      // every page but the last is full, and says where the next one starts
      for (const [i, page] of pages.entries()) {
        const data = page.body.data as Json[]
        expect(data.length).toBeLessThanOrEqual(limit)
        if (i < pages.length - 1) {
          expect(data).toHaveLength(limit)
          const last = (data[data.length - 1] as Json).id
          expect(page.body.next).toBe(`/v2/charges/?start_after=${last}&limit=${limit}`)
        }
      }
      const lastPage = pages[pages.length - 1] as Reply
      expect(lastPage.body.next).toBeNull()
      // the last page ends with the oldest charge of all
      const lastData = lastPage.body.data as Json[]
      expect(lastData[lastData.length - 1]?.id).toBe(existing[existing.length - 1])
    },
    120_000,
  )

  it('without changes in between, paging is exactly the list of charges', async () => {
    const all = await walk('/v2/charges/?limit=100')
    expectStrictlyDescending(all.ids)
    const byOnes = await walk('/v2/charges/?limit=37')
    expect(byOnes.ids).toEqual(all.ids)
    for (const id of existing) expect(all.ids).toContain(id)
  })

  it('every status is listed, as full charges', async () => {
    const page = await t.sk.get('/v2/charges/?limit=100')
    const statuses = new Set(page.body.data.map((c: Json) => c.status))
    expect(statuses).toEqual(new Set(['succeeded', 'failed', 'pending']))
    for (const c of page.body.data) {
      expect(c.object).toBe('charge')
      expect(c.source.object).toBe('source')
      expect(Array.isArray(c.refunds)).toBe(true)
      const one = await t.sk.get(`/v2/charges/${c.id}`)
      expect(one.body).toEqual(c)
    }
  })

  it('a listed charge carries its refunds, oldest first, as a retrieve shows them', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const ch = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    const first = await t.sk.post(`/v2/charges/${ch.body.id}/refund`, { amount: 300 })
    const second = await t.sk.post(`/v2/charges/${ch.body.id}/refund`, { amount: 200 })
    expect([first.status, second.status]).toEqual([200, 200])
    const listed = (await t.sk.get('/v2/charges/?limit=3')).body.data.find((c: Json) => c.id === ch.body.id)
    expect(listed.amount_refunded).toBe(500)
    expect(listed.refunds.map((r: Json) => r.amount)).toEqual([300, 200])
    expect(listed.refunds[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    expect((await t.sk.get(`/v2/charges/${ch.body.id}`)).body).toEqual(listed)
  })

  it('a listed charge shows its times to the microsecond, as a retrieve does, whatever their digits', async () => {
    const src = await t.sk.post('/v2/sources/', cardSource())
    const ch = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    const refund = await t.sk.post(`/v2/charges/${ch.body.id}/refund`, { amount: 300 })
    expect(refund.status).toBe(200)
    // PostgreSQL leaves out trailing zeros of the fraction, and the whole fraction when it is zero
    await t.db.query(
      "UPDATE charges SET created_at = '2026-03-04 05:06:07+00', updated_at = '2026-03-04 05:06:07.5+00' WHERE id = $1",
      [ch.body.id],
    )
    await t.db.query("UPDATE sources SET created_at = '2026-03-04 05:06:06.000001+00' WHERE id = $1", [src.body.id])
    await t.db.query("UPDATE refunds SET updated_at = '2026-03-04 05:06:08.12+00' WHERE charge_id = $1", [ch.body.id])
    const listed = (await t.sk.get('/v2/charges/?limit=5')).body.data.find((c: Json) => c.id === ch.body.id)
    expect(listed.created_at).toBe('2026-03-04T05:06:07.000000Z')
    expect(listed.updated_at).toBe('2026-03-04T05:06:07.500000Z')
    expect(listed.source.created_at).toBe('2026-03-04T05:06:06.000001Z')
    expect(listed.refunds[0].updated_at).toBe('2026-03-04T05:06:08.120000Z')
    expect((await t.sk.get(`/v2/charges/${ch.body.id}`)).body).toEqual(listed)
  })

  it('the default page is 20 and its next keeps no limit', async () => {
    const res = await t.sk.get('/v2/charges/')
    expect(res.status).toBe(200)
    expect(res.body.data).toHaveLength(20)
    const last = res.body.data[19].id
    expect(res.body.next).toBe(`/v2/charges/?start_after=${last}`)
    const next = await t.sk.get(res.body.next)
    expect(next.body.data).toHaveLength(20)
    expect(next.body.data[0].id < last).toBe(true)
  })

  it('start_after gives the charges after it, and the oldest charge gives an empty last page', async () => {
    const middle = existing[100] as string
    const res = await t.sk.get(`/v2/charges/?start_after=${middle}&limit=5`)
    expect(res.body.data.map((c: Json) => c.id)).toEqual(existing.slice(101, 106))
    const oldest = existing[existing.length - 1] as string
    const end = await t.sk.get(`/v2/charges/?start_after=${oldest}`)
    expect(end.status).toBe(200)
    expect(end.body).toEqual({ object: 'list', next: null, data: [] })
    const tail = await t.sk.get(`/v2/charges/?start_after=${existing[existing.length - 3]}&limit=2`)
    expect(tail.body.data.map((c: Json) => c.id)).toEqual(existing.slice(-2))
    expect(tail.body.next).toBeNull()
  })

  it('an unknown, foreign or other-mode start_after is 400 with param start_after', async () => {
    const cases: string[] = ['ch_00000000000000000000000000000000', 'nope']
    const acct = await t.app.services.accounts.create('Someone else')
    const other = client(t.app, acct.sk_test_key)
    const src = await other.post('/v2/sources/', cardSource())
    const theirs = await other.post('/v2/charges/', { amount: 100, currency: 'usd', source: src.body.id })
    expect(theirs.status).toBe(201)
    cases.push(theirs.body.id)
    for (const cursor of cases) {
      const res = await t.sk.get(`/v2/charges/?start_after=${cursor}`)
      expect(res.status).toBe(400)
      expect(res.body.error.param).toBe('start_after')
    }
    const live = await t.skLive.get(`/v2/charges/?start_after=${existing[0]}`)
    expect(live.status).toBe(400)
    expect(live.body.error.param).toBe('start_after')
    // and the other account sees only its own charge
    const list = await other.get('/v2/charges/')
    expect(list.body.data.map((c: Json) => c.id)).toEqual([theirs.body.id])
  })

  it.each(['0', '101', '-1', '2.5', 'ten', '0x10', '1e1', '%2016', '16%20', '+16'])(
    'limit=%s is 422',
    async (limit) => {
      const res = await t.sk.get(`/v2/charges/?limit=${limit}`)
      expect(res.status).toBe(422)
      expect(res.body.error.param).toBe('limit')
      expect(res.body.error.detail).toHaveLength(1)
    },
  )

  it('a limit that reads as a number in another notation is refused by name', async () => {
    const res = await t.sk.get('/v2/charges/?limit=0x10')
    expect(res.body.error).toMatchObject({
      code: 'parameter_invalid',
      detail: [{ loc: ['query', 'limit'], msg: 'limit must be an integer in decimal digits', type: 'type' }],
    })
  })

  it('an unknown query parameter is 422', async () => {
    const res = await t.sk.get('/v2/charges/?page=2')
    expect(res.status).toBe(422)
  })
})
