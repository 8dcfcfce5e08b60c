import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, type Json, REDIRECT, type Reply, type TestApp, testApp } from '../helpers/app.js'

/**
 * Races between two app instances on one PostgreSQL database, as two processes of the service
 * would run: a single-use source is consumed once, refunds never add up past the amount, a
 * charge is captured, voided or answered once.
 */

describe('charges under concurrent requests from two instances', () => {
  let t: TestApp
  let twin: TestApp
  /** the secret test-key clients of both instances; request i goes to instance i % 2 */
  let clients: Client[]
  beforeAll(async () => {
    t = await testApp()
    twin = await t.twin()
    clients = [t.sk, twin.sk]
  })
  afterAll(async () => {
    await twin?.close()
    await t?.close()
  })

  const via = (i: number) => clients[i % 2] as Client

  /** n requests started together, split across the two instances */
  const race = (n: number, call: (c: Client, i: number) => Promise<Reply>) =>
    Promise.all(Array.from({ length: n }, (_, i) => call(via(i), i)))

  function tally(replies: Reply[]): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const r of replies) {
      const key = r.status < 300 ? String(r.status) : `${r.status} ${r.body?.error?.code}`
      counts[key] = (counts[key] ?? 0) + 1
    }
    return counts
  }

  async function source(body: object = cardSource()): Promise<Json> {
    const res = await t.sk.post('/v2/sources/', body)
    expect(res.status).toBe(200)
    return res.body
  }

  async function charge(extra: object = {}, body: object = cardSource()): Promise<Json> {
    const src = await source(body)
    const res = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.id, ...extra })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body
  }

  async function stored(id: string): Promise<Json> {
    const res = await twin.sk.get(`/v2/charges/${id}`)
    expect(res.status).toBe(200)
    return res.body
  }

  async function chargesOfSource(sourceId: string): Promise<number> {
    const res = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM charges WHERE source_id = $1', [
      sourceId,
    ])
    return res.rows[0]?.n ?? -1
  }

  it.each([
    ['card', cardSource()],
    ['declining card', cardSource({ number: '4000000000000002' })],
    ['wallet', { type: 'wallet_a', redirect: REDIRECT }],
  ])('20 creates on one %s source: one 201, nineteen source_used, one stored charge', async (_name, body) => {
    const src = await source(body)
    const replies = await race(20, (c) => c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.id }))
    expect(tally(replies)).toEqual({ '201': 1, '400 source_used': 19 })
    for (const r of replies.filter((r) => r.status === 400)) expect(r.body.error.param).toBe('source')
    const winner = replies.find((r) => r.status === 201) as Reply
    expect(winner.body.source).toMatchObject({ id: src.id, used: true })
    expect(await chargesOfSource(src.id)).toBe(1)
    const list = await t.sk.get('/v2/charges/?limit=100')
    expect(list.body.data.filter((c: Json) => c.source.id === src.id).map((c: Json) => c.id)).toEqual([winner.body.id])
    expect((await twin.sk.get(`/v2/sources/${src.id}`)).body.used).toBe(true)
  })

  it('charging and attaching one source at once: exactly one of them consumes it', async () => {
    const src = await source()
    const cus = await t.sk.post('/v2/customers/', { email: 'race@example.com', description: 'race' })
    const replies = await race(20, (c, i) =>
      i % 4 < 2
        ? c.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.id })
        : c.post(`/v2/customers/${cus.body.id}/sources`, { source: src.id }),
    )
    const won = replies.filter((r) => r.status < 300)
    expect(won).toHaveLength(1)
    for (const r of replies.filter((r) => r.status >= 300)) {
      expect(r.status).toBe(400)
      expect(r.body.error.code).toBe('source_used')
    }
    const customer = await t.sk.get(`/v2/customers/${cus.body.id}`)
    const attached = customer.body.sources.some((s: Json) => s.id === src.id)
    expect(await chargesOfSource(src.id)).toBe(attached ? 0 : 1)
  })

  it('20 refunds of 100 on a 1000 charge: ten succeed, the others are refused, nothing over-refunds', async () => {
    const c = await charge()
    const replies = await race(20, (cl) => cl.post(`/v2/charges/${c.id}/refund`, { amount: 100 }))
    const okReplies = replies.filter((r) => r.status === 200)
    expect(okReplies).toHaveLength(10)
    for (const r of replies.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400)
      expect(['amount_too_large', 'charge_not_refundable']).toContain(r.body.error.code)
    }
    const after = await stored(c.id)
    const succeeded = after.refunds.filter((r: Json) => r.status === 'succeeded')
    expect(succeeded).toHaveLength(10)
    const sum = succeeded.reduce((s: number, r: Json) => s + r.amount, 0)
    expect(sum).toBe(1000)
    expect(after.amount_refunded).toBe(sum)
    expect(after.refunds).toHaveLength(10)
    expect(after.status).toBe('refunded')
    expect(new Set(after.refunds.map((r: Json) => r.id)).size).toBe(10)
  })

  it('20 refunds of 70 on a 1000 charge: fourteen succeed, six are refused as too large', async () => {
    const c = await charge()
    const replies = await race(20, (cl) => cl.post(`/v2/charges/${c.id}/refund`, { amount: 70 }))
    expect(tally(replies)).toEqual({ '200': 14, '400 amount_too_large': 6 })
    const after = await stored(c.id)
    const sum = after.refunds.reduce((s: number, r: Json) => s + r.amount, 0)
    expect(sum).toBe(980)
    expect(sum).toBeLessThanOrEqual(after.amount)
    expect(after.amount_refunded).toBe(sum)
    expect(after.refunds.every((r: Json) => r.status === 'succeeded' && r.amount === 70)).toBe(true)
    expect(after.status).toBe('succeeded')
    // what is left can still be refunded, and no more
    const rest = await t.sk.post(`/v2/charges/${c.id}/refund`)
    expect(rest.status).toBe(200)
    expect(rest.body).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
  })

  it('20 refunds of mixed amounts never add up past the amount', async () => {
    const c = await charge({ amount: 1000 })
    const amounts = Array.from({ length: 20 }, (_, i) => 37 + ((i * 53) % 150))
    const replies = await race(20, (cl, i) => cl.post(`/v2/charges/${c.id}/refund`, { amount: amounts[i] }))
    for (const r of replies.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400)
      expect(['amount_too_large', 'charge_not_refundable']).toContain(r.body.error.code)
    }
    const after = await stored(c.id)
    const sum = after.refunds.reduce((s: number, r: Json) => s + r.amount, 0)
    expect(sum).toBeLessThanOrEqual(1000)
    expect(after.amount_refunded).toBe(sum)
    expect(after.refunds).toHaveLength(replies.filter((r) => r.status === 200).length)
    expect(after.status).toBe(sum === 1000 ? 'refunded' : 'succeeded')
  })

  it('10 full refunds at once: exactly one succeeds', async () => {
    const c = await charge()
    const replies = await race(10, (cl) => cl.post(`/v2/charges/${c.id}/refund`))
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    for (const r of replies.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400)
      expect(['amount_too_large', 'charge_not_refundable']).toContain(r.body.error.code)
    }
    const after = await stored(c.id)
    expect(after).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
    expect(after.refunds).toHaveLength(1)
  })

  it('10 captures at once: exactly one succeeds', async () => {
    const c = await charge({ capture: false })
    const replies = await race(10, (cl, i) => cl.post(`/v2/charges/${c.id}/capture`, { amount: 500 + i }))
    expect(tally(replies)).toEqual({ '200': 1, '400 charge_not_capturable': 9 })
    const winner = replies.find((r) => r.status === 200) as Reply
    const after = await stored(c.id)
    expect(after).toMatchObject({ status: 'succeeded', captured: true, amount: winner.body.amount })
    expect(after.amount).toBeGreaterThanOrEqual(500)
    expect(after.amount).toBeLessThan(510)
  })

  it('captures and voids at once: exactly one of them happens', async () => {
    const c = await charge({ capture: false })
    const replies = await race(10, (cl, i) => cl.post(`/v2/charges/${c.id}/${i % 3 === 0 ? 'void' : 'capture'}`))
    const won = replies.filter((r) => r.status === 200)
    expect(won).toHaveLength(1)
    for (const r of replies.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400)
      expect(['charge_not_capturable', 'charge_not_voidable']).toContain(r.body.error.code)
    }
    const after = await stored(c.id)
    expect(after.status).toBe((won[0] as Reply).body.status)
    if (after.status === 'voided') expect(after).toMatchObject({ authorized: false, captured: false })
    else expect(after).toMatchObject({ status: 'succeeded', captured: true })
  })

  it('10 test-mode answers at once on a pending charge: one moves it, the others are charge_not_pending', async () => {
    const c = await charge({}, { type: 'wallet_b', redirect: REDIRECT })
    expect(c.status).toBe('pending')
    const replies = await race(10, (cl, i) =>
      cl.post(`/v2/test/charges/${c.id}/authorize`, { decision: i % 2 === 0 ? 'approve' : 'decline' }),
    )
    expect(tally(replies)).toEqual({ '200': 1, '400 charge_not_pending': 9 })
    const after = await stored(c.id)
    expect(after.status).toBe((replies.find((r) => r.status === 200) as Reply).body.status)
    expect(['succeeded', 'failed']).toContain(after.status)
  })

  it('10 hosted-page answers at once: one decides, and all send the payer where the charge ended', async () => {
    const c = await charge({}, { type: 'qr_a', redirect: REDIRECT })
    const url = new URL(c.source.action.url)
    const token = url.searchParams.get('token') as string
    const apps = [t.anon, twin.anon]
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (apps[i % 2] as Client).post(url.pathname, new URLSearchParams({ token, decision: 'approve' }).toString(), {
          'content-type': 'application/x-www-form-urlencoded',
        }),
      ),
    )
    expect(replies.map((r) => [r.status, r.headers.location])).toEqual(replies.map(() => [303, REDIRECT.success]))
    expect((await stored(c.id)).status).toBe('succeeded')
    const events = (await t.sk.get(`/v2/events/?charge=${c.id}`)).body.data.map((e: { type: string }) => e.type)
    expect(events.filter((type: string) => type === 'charge.succeeded')).toHaveLength(1)
  })

  /** A charge on a vaulted transfer source whose bank account a first payment linked: it waits for an OTP. */
  async function chargeOnLinkedAccount(email: string) {
    const src = await source({ type: 'transfer_a', redirect: REDIRECT })
    const cus = await t.sk.post('/v2/customers/', { email, description: 'otp' })
    await t.sk.post(`/v2/customers/${cus.body.id}/sources`, { source: src.id })
    const link = await t.sk.post('/v2/charges/', {
      amount: 100,
      currency: 'php',
      source: src.id,
      customer: cus.body.id,
    })
    await t.sk.post(`/v2/test/charges/${link.body.id}/authorize`, { decision: 'approve' })
    return t.sk.post('/v2/charges/', { amount: 800, currency: 'php', source: src.id, customer: cus.body.id })
  }

  it('10 OTP confirmations at once: exactly one succeeds', async () => {
    const c = await chargeOnLinkedAccount('otp@example.com')
    expect(c.body.source.action.type).toBe('verify_otp')
    const replies = await race(10, (cl) =>
      cl.post(`/v2/charges/${c.body.id}/verify`, {
        confirmation_id: c.body.source.action.confirmation_id,
        otp: '123456',
      }),
    )
    expect(tally(replies)).toEqual({ '200': 1, '400 charge_not_pending': 9 })
    expect((await stored(c.body.id)).status).toBe('succeeded')
  })

  it('wrong OTPs at once never count more than three attempts', async () => {
    const c = await chargeOnLinkedAccount('otp2@example.com')
    const conf = c.body.source.action.confirmation_id
    // rounds of concurrent wrong guesses until the charge fails
    const codes: string[] = []
    for (let round = 0; round < 10; round++) {
      const replies = await race(6, (cl) =>
        cl.post(`/v2/charges/${c.body.id}/verify`, { confirmation_id: conf, otp: '999999' }),
      )
      for (const r of replies)
        codes.push(r.status === 200 ? `200 ${r.body.status}` : `${r.status} ${r.body.error.code}`)
      if ((await stored(c.body.id)).status === 'failed') break
    }
    expect(codes.filter((x) => x === '400 otp_invalid')).toHaveLength(2)
    expect(codes.filter((x) => x === '200 failed')).toHaveLength(1)
    expect(codes.every((x) => ['400 otp_invalid', '200 failed', '400 charge_not_pending'].includes(x))).toBe(true)
    const after = await stored(c.body.id)
    expect(after.failure_data.code).toBe('otp_attempts_exceeded')
  })
  it('the payer timeout in both instances and payers answering at once: each charge decided once', async () => {
    const pending: Json[] = []
    for (let i = 0; i < 12; i++) {
      const src = await source({ type: 'qr_a', redirect: REDIRECT })
      const c = await t.sk.post('/v2/charges/', { amount: 500 + i, currency: 'thb', source: src.id })
      expect(c.body.status).toBe('pending')
      pending.push(c.body)
    }
    await t.db.query(
      "UPDATE charges SET updated_at = now() - interval '2 minutes', processing_since = processing_since - interval '2 minutes' WHERE id = ANY($1)",
      [pending.map((c) => c.id)],
    )
    const ids = pending.map((c) => c.id)
    // the answers go first; the sweeps start while the first of them are under way
    const answering = Promise.all(
      ids.map((id, i) => via(i).post(`/v2/test/charges/${id}/authorize`, { decision: 'approve' })),
    )
    await new Promise((r) => setTimeout(r, 15))
    const [expiredHere, expiredThere, answers] = await Promise.all([
      t.app.services.charges.expireAbandoned(60_000),
      twin.app.services.charges.expireAbandoned(60_000),
      answering,
    ])
    const after = await Promise.all(ids.map(stored))
    const expired = after.filter((c) => c.status === 'failed')
    expect(expiredHere + expiredThere).toBe(expired.length)
    for (const [i, c] of after.entries()) {
      const answer = answers[i] as Reply
      if (c.status === 'failed') {
        expect(c.failure_data.code).toBe('payment_expired')
        expect(answer.status, JSON.stringify(answer.body)).toBe(400)
        expect(answer.body.error.code).toBe('charge_not_pending')
      } else {
        expect(c.status).toBe('succeeded')
        expect(answer.status).toBe(200)
      }
    }
    // one decision each, recorded once: the pending event and then one other
    const events = await t.db.query<{ charge_id: string; types: string[] }>(
      'SELECT charge_id, array_agg(type ORDER BY id) AS types FROM events WHERE charge_id = ANY($1) GROUP BY charge_id',
      [ids],
    )
    expect(events.rows).toHaveLength(ids.length)
    for (const row of events.rows) {
      const c = after.find((x) => x.id === row.charge_id)
      expect(row.types.sort()).toEqual(
        ['charge.pending', c.status === 'failed' ? 'charge.failed' : 'charge.succeeded'].sort(),
      )
    }
  })
})
