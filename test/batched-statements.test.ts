import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import { Simulator } from '../src/processor/simulator.js'
import type { Db } from '../src/store/db.js'
import {
  buildApp,
  type Client,
  cardSource,
  client,
  type Json,
  REDIRECT,
  type Reply,
  recordingDb,
  type TestApp,
  testApp,
} from './helpers/app.js'

/**
 * Concurrent requests share statements (src/store/batch.ts): sources made at once go in one
 * insert, charges made at once are recorded, and their outcomes stored, a batch at a time;
 * customers retrieved or updated at once, and pages of charges listed at once, are read and
 * written a batch at a time. Whatever shares a statement, each request gets exactly its own
 * answer, in its own account and mode, as a request made alone afterwards shows it. The embedded
 * store answers each statement before the next request reaches its own, so batches form on
 * PostgreSQL only; the answers must be the same on both.
 */

let t: TestApp
let app: App
/** every statement the app under test sent */
const statements: string[] = []
/** the parameters of each of those statements */
const parameters: unknown[][] = []
let recording: Db
let sk: Client
let skLive: Client
let otherSk: Client
/** the clients of the app under test, and the second account's key */
const clients = {} as { sk: Client; skLive: Client; otherSk: Client; other: { sk_test_key: string } }

beforeAll(async () => {
  t = await testApp()
  recording = recordingDb(t.db, statements, parameters)
  ;({ app } = await buildApp(recording, t.vault, { liveProcessor: new Simulator() }))
  sk = client(app, t.account.sk_test_key)
  skLive = client(app, t.account.sk_live_key)
  const other = await app.services.accounts.create('Other shop')
  otherSk = client(app, other.sk_test_key)
  Object.assign(clients, { sk, skLive, otherSk, other })
})
afterAll(async () => {
  await app.close()
  await t.close()
})

const count = (fragment: string) => statements.filter((s) => s.includes(fragment)).length

/** A distinct card for request i: its holder's name and its number's last four digits. */
function cardOf(i: number) {
  const numbers = ['4242424242424242', '5555555555554444', '4000056655665556', '378282246310005']
  return cardSource({ name: `Holder ${i}`, number: numbers[i % numbers.length] })
}

describe('sources made at once', () => {
  it('share inserts, and each answer and stored source is the request it came from', async () => {
    const before = count('INSERT INTO sources')
    const n = 40
    const replies = await Promise.all(Array.from({ length: n }, (_, i) => sk.post('/v2/sources/', cardOf(i))))
    const inserts = count('INSERT INTO sources') - before
    expect(inserts).toBeGreaterThan(0)
    expect(inserts).toBeLessThan(n / 4)
    // each insert carries its sources' ten values each, padded with rows of nulls up to a power of
    // two rows (src/store/param-rows.ts); the padding stores nothing
    const insertParams = parameters.filter((_, i) => statements[i]?.includes('INSERT INTO sources')).slice(-inserts)
    let stored = 0
    for (const params of insertParams) {
      const rows = params.length / 10
      expect(Number.isInteger(Math.log2(rows)), `${rows} rows`).toBe(true)
      const real = Array.from({ length: rows }, (_, r) => params[r * 10]).filter((id) => id !== null).length
      expect(params.slice(real * 10).every((v) => v === null)).toBe(true)
      stored += real
    }
    expect(stored).toBe(n)
    const ids = new Set<string>()
    for (const [i, r] of replies.entries()) {
      expect(r.status, r.text).toBe(200)
      const want = cardOf(i).card
      expect(r.body.card).toMatchObject({ name: want.name, last4: want.number.slice(-4) })
      ids.add(r.body.id)
      const stored = await sk.get(`/v2/sources/${r.body.id}`)
      expect(stored.text).toBe(r.text)
    }
    expect(ids.size).toBe(n)
  })
})

/**
 * The simulator decides in process, so a new charge is decided first and recorded once, with its
 * outcome; a processor elsewhere (a live connector) has the charge recorded before the call and
 * its outcome after. Both ways must give the same answers.
 */
class ProcessorElsewhere extends Simulator {
  override readonly decidesInProcess = false
}

for (const way of ['decided first', 'recorded before the call'] as const) {
  describe(`charges made at once, ${way}`, () => {
    let sk: Client
    let skLive: Client
    let otherSk: Client
    let variant: App | undefined
    beforeAll(async () => {
      if (way === 'decided first') {
        ;({ sk, skLive, otherSk } = clients)
        return
      }
      const processors = { testProcessor: new ProcessorElsewhere(), liveProcessor: new ProcessorElsewhere() }
      ;({ app: variant } = await buildApp(recording, t.vault, processors))
      sk = client(variant, t.account.sk_test_key)
      skLive = client(variant, t.account.sk_live_key)
      otherSk = client(variant, clients.other.sk_test_key)
    })
    afterAll(async () => {
      await variant?.close()
    })

    it('share statements, and each charge is the one asked for, as stored and as its event holds it', async () => {
      const n = 30
      const sources = await Promise.all(Array.from({ length: n }, (_, i) => sk.post('/v2/sources/', cardOf(i))))
      const takes = count('UPDATE sources s SET used = true')
      const inserts = count('INSERT INTO charges')
      const outcomes = count('UPDATE charges c SET status = v.status')
      const replies = await Promise.all(
        sources.map((s, i) =>
          sk.post('/v2/charges/', {
            amount: 100 + i,
            currency: 'usd',
            source: s.body.id,
            description: `Order ${i}`,
            capture: i % 2 === 0,
            metadata: { order: i },
          }),
        ),
      )
      const tookSources = count('UPDATE sources s SET used = true') - takes
      const recordedOutcomes = count('UPDATE charges c SET status = v.status') - outcomes
      expect(count('INSERT INTO charges') - inserts).toBe(tookSources)
      if (way === 'decided first') expect(recordedOutcomes).toBe(0)
      else expect(recordedOutcomes).toBeGreaterThan(0)
      expect(tookSources).toBeLessThan(n / 4)
      expect(recordedOutcomes).toBeLessThan(n / 4)

      const events = (await sk.get('/v2/events/?limit=100')).body.data as Json[]
      for (const [i, r] of replies.entries()) {
        expect(r.status, r.text).toBe(201)
        expect(r.body).toMatchObject({
          amount: 100 + i,
          description: `Order ${i}`,
          captured: i % 2 === 0,
          status: 'succeeded',
          metadata: { order: i },
          livemode: false,
        })
        expect(r.body.source).toMatchObject({ id: sources[i]?.body.id, used: true })
        expect(r.body.source.card).toMatchObject({ name: `Holder ${i}`, cvc_checked: 'pass' })
        expect((await sk.get(`/v2/charges/${r.body.id}`)).body).toEqual(r.body)
        const own = events.filter((e) => e.data.object.id === r.body.id)
        expect(own.map((e) => e.type)).toEqual(['charge.succeeded'])
        expect(own[0]?.data.object).toEqual(r.body)
      }
    })

    it('of charges on one source made at once, one takes it; the others are refused and write nothing', async () => {
      const shared = await Promise.all(Array.from({ length: 4 }, () => sk.post('/v2/sources/', cardSource())))
      // five requests for each of four sources, interleaved, all in flight together
      const replies: Reply[] = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: shared[i % 4]?.body.id }),
        ),
      )
      for (const s of shared) {
        const mine = replies.filter((r) => r.body?.source?.id === s.body.id || r.status !== 201)
        expect(mine.filter((r) => r.status === 201 && r.body.source.id === s.body.id)).toHaveLength(1)
        const stored = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM charges WHERE source_id = $1', [
          s.body.id,
        ])
        expect(stored.rows[0]?.n).toBe(1)
      }
      const refused = replies.filter((r) => r.status !== 201)
      expect(refused).toHaveLength(16)
      for (const r of refused) expect(r.body.error).toMatchObject({ code: 'source_used', param: 'source' })
    })

    it('charges of two accounts and both modes made at once land each in its own account and mode', async () => {
      const callers = [sk, skLive, otherSk]
      const sources = await Promise.all(
        Array.from({ length: 24 }, (_, i) => (callers[i % 3] as Client).post('/v2/sources/', cardOf(i))),
      )
      const replies = await Promise.all(
        sources.map((s, i) =>
          (callers[i % 3] as Client).post('/v2/charges/', { amount: 700 + i, currency: 'eur', source: s.body.id }),
        ),
      )
      for (const [i, r] of replies.entries()) {
        expect(r.status, r.text).toBe(201)
        expect(r.body).toMatchObject({ amount: 700 + i, livemode: i % 3 === 1 })
        const mine = callers[i % 3] as Client
        expect((await mine.get(`/v2/charges/${r.body.id}`)).status).toBe(200)
        for (const [k, c] of callers.entries()) {
          if (k !== i % 3) expect((await c.get(`/v2/charges/${r.body.id}`)).status).toBe(404)
        }
      }
    })

    it('a notify call is queued for exactly the charges whose source has a notify address', async () => {
      const notify = 'https://shop.example/notify'
      const sources = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          sk.post('/v2/sources/', { ...cardOf(i), redirect: { ...REDIRECT, ...(i % 3 === 0 ? { notify } : {}) } }),
        ),
      )
      const replies = await Promise.all(
        sources.map((s) => sk.post('/v2/charges/', { amount: 900, currency: 'usd', source: s.body.id })),
      )
      const queued = await t.db.query<{ charge: string }>(
        `SELECT e.charge_id AS charge FROM deliveries d JOIN events e ON e.id = d.event_id
       WHERE e.charge_id = ANY($1::text[])`,
        [replies.map((r) => r.body.id)],
      )
      const withNotify = replies.filter((_, i) => i % 3 === 0).map((r) => r.body.id)
      expect(queued.rows.map((r) => r.charge).sort()).toEqual(withNotify.sort())
    })
  })
}

describe('customers retrieved and updated at once', () => {
  it('updates of one customer made at once all apply, as if one after another', async () => {
    const customers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        sk.post('/v2/customers/', { email: `c${i}@example.com`, description: 'New' }),
      ),
    )
    const batchesBefore = count('UPDATE customers c SET')
    // three updates of each customer, each of another field, all in flight together
    const replies = await Promise.all(
      customers.flatMap((c, i) => [
        sk.put(`/v2/customers/${c.body.id}`, { description: `Customer ${i}` }),
        sk.put(`/v2/customers/${c.body.id}`, { mobile_number: `+4470000000${i}` }),
        sk.put(`/v2/customers/${c.body.id}`, { metadata: { n: i } }),
      ]),
    )
    for (const r of replies) expect(r.status, r.text).toBe(200)
    expect(count('UPDATE customers c SET') - batchesBefore).toBeLessThan(replies.length / 2)
    for (const [i, c] of customers.entries()) {
      const now = await sk.get(`/v2/customers/${c.body.id}`)
      expect(now.body).toMatchObject({
        description: `Customer ${i}`,
        mobile_number: `+4470000000${i}`,
        metadata: { n: i },
      })
    }
  })

  it('retrieves made at once by two accounts and both modes each answer the caller its own customer', async () => {
    const callers = [sk, skLive, otherSk]
    const made = await Promise.all(
      Array.from({ length: 18 }, (_, i) =>
        (callers[i % 3] as Client).post('/v2/customers/', { email: `r${i}@example.com`, description: `R ${i}` }),
      ),
    )
    // every caller asks for every customer at once: its own are found, the others' are not
    const asks = made.flatMap((m, i) => callers.map((c, k) => ({ c, k, i, id: m.body.id as string })))
    const replies = await Promise.all(asks.map((a) => a.c.get(`/v2/customers/${a.id}`)))
    for (const [n, a] of asks.entries()) {
      const r = replies[n] as Reply
      if (a.k === a.i % 3) {
        expect(r.status).toBe(200)
        expect(r.body).toMatchObject({ id: a.id, description: `R ${a.i}`, livemode: a.k === 1 })
      } else expect(r.status).toBe(404)
    }
  })
})

describe('pages of charges listed at once', () => {
  it('by two accounts, both modes, with and without cursors: each page is the one asked for', async () => {
    // charges enough for a few pages of each caller
    const callers = [sk, skLive, otherSk]
    for (const c of callers) {
      const made = await Promise.all(Array.from({ length: 7 }, () => c.post('/v2/sources/', cardSource())))
      await Promise.all(made.map((s) => c.post('/v2/charges/', { amount: 300, currency: 'usd', source: s.body.id })))
    }
    const firsts = await Promise.all(callers.map((c) => c.get('/v2/charges/?limit=4')))
    const paths = callers.flatMap((_, k) => {
      const first = firsts[k]?.body
      return [
        '/v2/charges/?limit=4',
        '/v2/charges/?limit=2',
        `/v2/charges/?limit=3&start_after=${first.data[1].id}`,
        first.next as string,
        '/v2/charges/?start_after=ch_00000000000000000000000000000000',
      ].map((path) => ({ k, path }))
    })
    const together = await Promise.all(paths.map((p) => (callers[p.k] as Client).get(p.path)))
    for (const [n, p] of paths.entries()) {
      const alone = await (callers[p.k] as Client).get(p.path)
      expect(together[n]?.status).toBe(alone.status)
      expect(together[n]?.text).toBe(alone.text)
    }
    expect(together.filter((r) => r.status === 400).map((r) => r.body.error.code)).toEqual([
      'cursor_invalid',
      'cursor_invalid',
      'cursor_invalid',
    ])
    // a cursor of another caller's list names nothing in this one
    const foreign = await otherSk.get(`/v2/charges/?start_after=${firsts[0]?.body.data[0].id}`)
    expect(foreign.status).toBe(400)
  })

  it('the same page asked by many at once is read once a batch, and each caller gets all of it', async () => {
    const paths = Array.from({ length: 30 }, (_, i) => (i % 5 === 4 ? '/v2/charges/?limit=3' : '/v2/charges/?limit=5'))
    const callers = paths.map((_, i) => (i % 6 === 5 ? otherSk : sk))
    const from = statements.length
    const together = await Promise.all(paths.map((path, i) => (callers[i] as Client).get(path)))
    const pageStatements = parameters
      .slice(from)
      .filter((_, i) => statements[from + i]?.includes('AS cursor_ok'))
      .map((p) => JSON.parse(p[0] as string) as { account_id: string; start_after: string | null; rows: number }[])
    for (const requests of pageStatements) {
      const keys = requests.map((r) => `${r.account_id} ${r.start_after} ${r.rows}`)
      expect(new Set(keys).size).toBe(keys.length)
    }
    const asked = pageStatements.reduce((sum, requests) => sum + requests.length, 0)
    expect(asked).toBeLessThanOrEqual(paths.length)
    expect(asked).toBeLessThan(paths.length / 2)
    for (const [i, path] of paths.entries()) {
      const alone = await (callers[i] as Client).get(path)
      expect(together[i]?.status, together[i]?.text).toBe(200)
      expect(together[i]?.text).toBe(alone.text)
      expect(together[i]?.body.data).toHaveLength(path.endsWith('=3') ? 3 : 5)
    }
  })
})
