import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Simulator } from '../../src/processor/simulator.js'
import {
  buildApp,
  type Client,
  cardSource,
  client,
  type Json,
  REDIRECT,
  type TestApp,
  testApp,
} from '../helpers/app.js'
import { startReceiver, waitFor } from '../notify/notify-harness.js'

const DAY = 86_400
const seconds = (iso: string) => Date.parse(iso) / 1000

let t: TestApp
/** a second account on the same store, whose clock is never advanced */
let otherShop: Client
beforeAll(async () => {
  t = await testApp()
  otherShop = client(t.app, (await t.app.services.accounts.create('Other shop')).sk_test_key)
})
afterAll(() => t.close())

/** Seconds from the real now to `iso`. */
const ahead = (iso: string) => seconds(iso) - Date.now() / 1000

/** A customer, a card source, a charge of it, a refund and their events, made with `c`. */
async function makeEverything(c: Client) {
  const customer = (await c.post('/v2/customers/', { email: 'ann@example.com', description: 'Ann' })).body
  const source = (await c.post('/v2/sources/', cardSource())).body
  const charge = (await c.post('/v2/charges/', { amount: 1500, currency: 'usd', source: source.id })).body
  expect(charge.status).toBe('succeeded')
  const refunded = (await c.post(`/v2/charges/${charge.id}/refund`, { amount: 500 })).body
  const events = (await c.get(`/v2/events/?charge=${charge.id}`)).body.data as Json[]
  return { customer, source, charge, refunded, events }
}

/** Every created_at and updated_at of what makeEverything made. */
function stamps(made: Awaited<ReturnType<typeof makeEverything>>): string[] {
  const { customer, source, charge, refunded, events } = made
  return [
    customer.created_at,
    customer.updated_at,
    source.created_at,
    source.updated_at,
    charge.created_at,
    charge.updated_at,
    refunded.updated_at,
    ...refunded.refunds.flatMap((r: Json) => [r.created_at, r.updated_at]),
    ...events.map((e) => e.created_at),
  ]
}

describe('what a test account makes is stamped on its clock', () => {
  it("reads a day ahead after a day's advance; live mode and other accounts read the real time", async () => {
    expect((await t.sk.post('/v2/test/clock/advance', { seconds: DAY })).status).toBe(200)
    const clockBefore = (await t.sk.get('/v2/test/clock')).body.now

    const mine = await makeEverything(t.sk)
    expect(mine.events.length).toBeGreaterThanOrEqual(2)
    for (const at of stamps(mine)) {
      expect(ahead(at), at).toBeGreaterThan(DAY - 60)
      expect(ahead(at), at).toBeLessThan(DAY + 60)
      expect(at >= clockBefore, `${at} is not before the clock read first, ${clockBefore}`).toBe(true)
    }
    // the refund came after the charge, by the same clock
    expect(mine.refunded.updated_at >= mine.charge.created_at).toBe(true)

    for (const c of [t.skLive, otherShop]) {
      // live mode needs a live processor: only customers there
      const customer = (await c.post('/v2/customers/', { email: 'bo@example.com', description: 'Bo' })).body
      expect(Math.abs(ahead(customer.created_at))).toBeLessThan(60)
      if (c === otherShop)
        for (const at of stamps(await makeEverything(c))) expect(Math.abs(ahead(at))).toBeLessThan(60)
    }
  })

  it('keeps the order of ids and of times within the account across an advance', async () => {
    const first = (await t.sk.post('/v2/customers/', { email: 'a@example.com', description: 'A' })).body
    await t.sk.post('/v2/test/clock/advance', { seconds: 3600 })
    const second = (await t.sk.post('/v2/customers/', { email: 'b@example.com', description: 'B' })).body
    expect(second.id > first.id).toBe(true)
    expect(seconds(second.created_at) - seconds(first.created_at)).toBeGreaterThan(3599)
    // lists page by id, newest first
    const listed = (await t.sk.get('/v2/customers/?limit=2')).body.data.map((c: Json) => c.id)
    expect(listed).toEqual([second.id, first.id])
  })
})

describe('an update on the test clock', () => {
  it("reads the later time after an advance, its creation kept; another account's clock does not move", async () => {
    const made = (await t.sk.post('/v2/customers/', { email: 'cy@example.com', description: 'Cy' })).body
    expect((await t.sk.post('/v2/test/clock/advance', { seconds: DAY })).status).toBe(200)
    const clock = (await t.sk.get('/v2/test/clock')).body.now
    const updated = (await t.sk.put(`/v2/customers/${made.id}`, { description: 'Cy Young' })).body
    expect(updated.created_at).toBe(made.created_at)
    expect(updated.updated_at >= clock, `${updated.updated_at} is before the clock, ${clock}`).toBe(true)
    expect(seconds(updated.updated_at) - seconds(made.updated_at)).toBeGreaterThan(DAY - 1)
    expect((await t.sk.get(`/v2/customers/${made.id}`)).body.updated_at).toBe(updated.updated_at)

    expect((await otherShop.get('/v2/test/clock')).body.offset_seconds).toBe(0)
    const theirs = (await otherShop.post('/v2/customers/', { email: 'di@example.com', description: 'Di' })).body
    const theirsUpdated = (await otherShop.put(`/v2/customers/${theirs.id}`, { description: 'Di Ng' })).body
    expect(Math.abs(ahead(theirsUpdated.updated_at))).toBeLessThan(60)
  })
})

describe('idempotency records on the test clock', () => {
  it('forgets a key 24 hours later by the account clock: another body then runs fresh', async () => {
    const app = await testApp()
    try {
      const key = { 'Idempotency-Key': 'order-1' }
      const first = await app.sk.post('/v2/customers/', { email: 'first@example.com', description: 'A' }, key)
      expect(first.status).toBe(201)
      // live mode holds the same key, made at the same real time
      expect(
        (await app.skLive.post('/v2/customers/', { email: 'live@example.com', description: 'A' }, key)).status,
      ).toBe(201)
      const reused = await app.sk.post('/v2/customers/', { email: 'second@example.com', description: 'A' }, key)
      expect(reused.status).toBe(409)
      expect(reused.body.error.code).toBe('idempotency_key_reused')

      await app.sk.post('/v2/test/clock/advance', { seconds: 23 * 3600 })
      expect((await app.sk.post('/v2/customers/', { email: 'second@example.com', description: 'A' }, key)).status).toBe(
        409,
      )

      await app.sk.post('/v2/test/clock/advance', { seconds: 2 * 3600 })
      const fresh = await app.sk.post('/v2/customers/', { email: 'second@example.com', description: 'A' }, key)
      expect(fresh.status).toBe(201)
      expect(fresh.body.id).not.toBe(first.body.id)
      expect(fresh.body.email).toBe('second@example.com')
      // and the new record holds from the account's new time on: a retry replays it
      const again = await app.sk.post('/v2/customers/', { email: 'second@example.com', description: 'A' }, key)
      expect(again.body.id).toBe(fresh.body.id)

      // live mode's record is the real time's: still bound to its first body
      const live = await app.skLive.post('/v2/customers/', { email: 'other@example.com', description: 'A' }, key)
      expect(live.status).toBe(409)
    } finally {
      await app.close()
    }
  })
})

describe('card data retention on the test clock', () => {
  it("erases an advanced account's old card data at once (a saved card's security code only), and no other account's or mode's", async () => {
    const HOUR = 3600
    const app = await testApp(
      {},
      { recovery: { intervalMs: 60_000, graceMs: 30_000, cardDataRetentionMs: HOUR * 1000 } },
    )
    try {
      const bystander = client(app.app, (await app.app.services.accounts.create('Bystander')).sk_test_key)
      const held = async (id: string) =>
        (
          await app.db.query<{ number: boolean; cvc: boolean }>(
            'SELECT card_number_enc IS NOT NULL AS number, card_cvc_enc IS NOT NULL AS cvc FROM sources WHERE id = $1',
            [id],
          )
        ).rows[0]
      const mine = (await app.sk.post('/v2/sources/', cardSource())).body.id
      const theirs = (await bystander.post('/v2/sources/', cardSource())).body.id
      const live = (await app.skLive.post('/v2/sources/', cardSource())).body.id
      // a card saved to a customer
      const saved = (await app.sk.post('/v2/sources/', cardSource())).body.id
      const customer = (await app.sk.post('/v2/customers/', { email: 'ann@example.com', description: 'Ann' })).body.id
      expect((await app.sk.post(`/v2/customers/${customer}/sources`, { source: saved })).status).toBe(200)
      expect(await held(mine)).toEqual({ number: true, cvc: true })
      expect(await held(saved)).toEqual({ number: true, cvc: true })

      await app.sk.post('/v2/test/clock/advance', { seconds: HOUR - 120 })
      await new Promise((r) => setTimeout(r, 1000))
      expect(await held(mine)).toEqual({ number: true, cvc: true })
      expect(await held(saved)).toEqual({ number: true, cvc: true })

      await app.sk.post('/v2/test/clock/advance', { seconds: 240 })
      // at once: the sweep's interval is a minute
      await waitFor('the erasure', async () => !(await held(mine))?.cvc && !(await held(saved))?.cvc, 5000)
      expect(await held(mine)).toEqual({ number: false, cvc: false })
      // the saved card keeps its number, not its security code: it charges, unchecked
      expect(await held(saved)).toEqual({ number: true, cvc: false })
      const again = await app.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: saved, customer })
      expect(again.body.status).toBe('succeeded')
      expect(again.body.source.card.cvc_checked).toBe('unchecked')
      expect(await held(theirs)).toEqual({ number: true, cvc: true })
      expect(await held(live)).toEqual({ number: true, cvc: true })
      // the source reads as before; it can no longer be charged
      const charged = await app.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: mine })
      expect(charged.status).not.toBe(200)
    } finally {
      await app.close()
    }
  })
})

describe('notify retries on the test clock', () => {
  it("sends an account's calls due by its new time at once, and no other account's", async () => {
    const receiver = await startReceiver((n) => (n === 1 || n === 2 ? 500 : 200))
    // an hour between attempts, looked for every minute: only the advance makes the retry come soon
    const app = await testApp({}, { notify: { schedule: [3600], timeoutMs: 2000, pollMs: 60_000 } })
    try {
      const bystander = client(app.app, (await app.app.services.accounts.create('Bystander')).sk_test_key)
      const notifying = async (c: Client) => {
        const src = await c.post('/v2/sources/', { ...cardSource(), redirect: { ...REDIRECT, notify: receiver.url } })
        const ch = await c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
        expect(ch.body.status).toBe('succeeded')
        return ch.body.id as string
      }
      const delivery = async (c: Client, charge: string) =>
        (await c.get(`/v2/deliveries/?charge=${charge}`)).body.data[0] as Json
      const mine = await notifying(app.sk)
      const theirs = await notifying(bystander)
      await waitFor('both first attempts', async () => receiver.calls.length >= 2)
      const waiting = await waitFor('my retry scheduled', async () => {
        const d = await delivery(app.sk, mine)
        // its first attempt recorded, not in flight
        return d.attempts.length === 1 && d.status === 'pending' && d
      })
      expect(ahead(waiting.next_attempt_at)).toBeGreaterThan(3000)

      // the retry is due an hour on, give or take its jitter
      await app.sk.post('/v2/test/clock/advance', { seconds: 2 * 3600 })
      const sent = await waitFor(
        'my retry',
        async () => {
          const d = await delivery(app.sk, mine)
          return d.status === 'delivered' && d
        },
        5000,
      )
      expect(sent.attempt_count).toBe(2)
      expect(receiver.calls.length).toBe(3)
      const left = await delivery(bystander, theirs)
      expect(left).toMatchObject({ status: 'pending', attempt_count: 1 })
      expect(ahead(left.next_attempt_at)).toBeGreaterThan(3000)
    } finally {
      await app.close()
      await receiver.close()
    }
  })
})

describe('the recovery sweep and an advance in another process', () => {
  it('fails the charges an advance through another process made overdue, within a second or so', async () => {
    const swept = await testApp({}, { recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: DAY * 1000 } })
    // a process of its own with no sweep, on its own pool
    const other = await buildApp(await swept.store.connect(), swept.vault)
    try {
      const src = await swept.sk.post('/v2/sources/', {
        ...cardSource({ number: '4000000000003220' }),
        redirect: REDIRECT,
      })
      const charge = (await swept.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })).body
      expect(charge.status).toBe('pending')
      const advanced = await client(other.app, swept.account.sk_test_key).post('/v2/test/clock/advance', {
        seconds: DAY + 60,
      })
      expect(advanced.status).toBe(200)
      const started = Date.now()
      const failed = await waitFor(
        'the payer timeout',
        async () => {
          const c = (await swept.sk.get(`/v2/charges/${charge.id}`)).body
          return c.status === 'failed' && c
        },
        10_000,
      )
      expect(failed.failure_data.code).toBe('payment_expired')
      // its failure is stamped on the account's clock
      expect(ahead(failed.updated_at)).toBeGreaterThan(DAY)
      expect(Date.now() - started).toBeLessThan(5000)
    } finally {
      await other.app.close()
      await swept.close()
    }
  })
})

describe('an operation under way while the clock is advanced', () => {
  it('is left to the request that began it: a refund is sent to the processor once', async () => {
    const refunds: string[] = []
    const counting = new (class extends Simulator {
      override async refund(_reference?: string, _amount?: number, _currency?: string, refundId?: string) {
        refunds.push(refundId ?? '')
        return super.refund()
      }
    })()
    // the sweep runs at once after an advance; its grace is of the real time
    const shop = await testApp({ testProcessor: counting }, { recovery: { intervalMs: 60_000, graceMs: 30_000 } })
    try {
      const source = (await shop.sk.post('/v2/sources/', cardSource())).body
      const charge = (await shop.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: source.id })).body
      const slow = shop.sk.post(
        `/v2/charges/${charge.id}/refund`,
        {},
        { 'Jackdaw-Test-Fault': 'processor_latency=1500' },
      )
      await new Promise((r) => setTimeout(r, 400))
      expect((await shop.sk.post('/v2/test/clock/advance', { seconds: 3600 })).status).toBe(200)
      expect((await slow).body).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
      await new Promise((r) => setTimeout(r, 300))
      expect(refunds).toHaveLength(1)
    } finally {
      await shop.close()
    }
  })
})
