import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  chargeNotifying,
  type Harness,
  harness,
  type Receiver,
  type Service,
  sleep,
  startReceiver,
  waitFor,
} from './notify-harness.js'

let h: Harness
let s: Service
let r: Receiver
beforeAll(async () => {
  h = await harness()
  s = await h.open({ schedule: [0.3], timeoutMs: 5000, pollMs: 50 })
})
afterEach(async () => {
  await s.sk.put('/v2/test/faults', { rules: [] })
  await r?.close()
})
afterAll(async () => {
  await s.close()
  await h.close()
})

interface StoredDelivery {
  id: string
  status: string
  /** when it is due, in milliseconds since the epoch; null once sent */
  due_ms: number | null
  /** how long after it was queued it is due */
  held_ms: number | null
}

async function storedDeliveries(eventId: string): Promise<StoredDelivery[]> {
  const res = await s.db.query<StoredDelivery>(
    `SELECT id, status, (EXTRACT(EPOCH FROM next_attempt_at) * 1000)::float8 AS due_ms,
       (EXTRACT(EPOCH FROM next_attempt_at - created_at) * 1000)::float8 AS held_ms
     FROM deliveries WHERE event_id = $1 ORDER BY id`,
    [eventId],
  )
  return res.rows
}

const eventIdOf = (body: string) => (JSON.parse(body) as { id: string }).id

async function setRules(rules: unknown[]) {
  const res = await s.sk.put('/v2/test/faults', { rules })
  expect(res.status).toBe(200)
}

describe('notify fault rules', () => {
  it('duplicate: each call is queued twice and the receiver gets the same event twice', async () => {
    r = await startReceiver(() => 200)
    await setRules([{ notify: 'duplicate' }])
    const { event } = await chargeNotifying(s.sk, r.url)
    await waitFor('two calls', async () => r.calls.length >= 2)
    await sleep(300)
    expect(r.calls.map((c) => eventIdOf(c.body))).toEqual([event.id, event.id])
    expect(r.calls[0]?.body).toBe(r.calls[1]?.body)
    const stored = await waitFor('both delivered', async () => {
      const rows = await storedDeliveries(event.id)
      return rows.every((d) => d.status === 'delivered') && rows
    })
    expect(stored).toHaveLength(2)
    expect(stored[0]?.id).not.toBe(stored[1]?.id)
    for (const d of stored) expect(d.id).toMatch(/^dlv_[0-9a-f]{32}$/)

    // without the rule, one call again
    await setRules([])
    const once = await chargeNotifying(s.sk, r.url)
    await waitFor('the call', async () => r.calls.some((c) => eventIdOf(c.body) === once.event.id))
    await sleep(300)
    expect(r.calls.filter((c) => eventIdOf(c.body) === once.event.id)).toHaveLength(1)
    expect(await storedDeliveries(once.event.id)).toHaveLength(1)
  })

  it('duplicate with a rate: at 0 each call is queued once, at 1 twice', async () => {
    r = await startReceiver(() => 200)
    const deliveredOf = (eventId: string) =>
      waitFor('every delivery sent', async () => {
        const rows = await storedDeliveries(eventId)
        return rows.length > 0 && rows.every((d) => d.status === 'delivered') && rows
      })
    await setRules([{ notify: 'duplicate', rate: 0 }])
    const never = await chargeNotifying(s.sk, r.url, 3000)
    expect(await deliveredOf(never.event.id)).toHaveLength(1)
    await setRules([{ notify: 'duplicate', rate: 1 }])
    const always = await chargeNotifying(s.sk, r.url, 3001)
    expect(await deliveredOf(always.event.id)).toHaveLength(2)
    await waitFor('three calls', async () => r.calls.length >= 3)
    expect(r.calls.map((c) => eventIdOf(c.body)).sort()).toEqual(
      [never.event.id, always.event.id, always.event.id].sort(),
    )
  })

  it('delay: the call is due that many seconds after it is queued, and not sent before', async () => {
    r = await startReceiver(() => 200)
    await setRules([{ notify: 'delay', seconds: 2 }])
    const queuedAt = Date.now()
    const { event } = await chargeNotifying(s.sk, r.url)
    const [queued] = await storedDeliveries(event.id)
    expect(queued?.status).toBe('pending')
    expect(queued?.held_ms).toBeGreaterThanOrEqual(2000)
    await sleep(1200)
    expect(r.calls).toHaveLength(0)
    const call = await waitFor('the late call', async () => r.calls[0])
    expect(eventIdOf(call.body)).toBe(event.id)
    expect(call.at - queuedAt).toBeGreaterThanOrEqual(1900)
  })

  it('reorder: calls queued while one is held are sent last queued first', async () => {
    r = await startReceiver(() => 200)
    await setRules([{ notify: 'reorder', seconds: 2 }])
    const sent: string[] = []
    for (let i = 0; i < 3; i++) {
      sent.push((await chargeNotifying(s.sk, r.url, 1000 + i)).event.id)
      await sleep(250)
    }
    const due = await Promise.all(sent.map(async (id) => (await storedDeliveries(id))[0]?.due_ms))
    expect(due[0]).toBeGreaterThan(due[1] as number)
    expect(due[1]).toBeGreaterThan(due[2] as number)
    await waitFor('three calls', async () => r.calls.length >= 3, 10_000)
    expect(r.calls.map((c) => eventIdOf(c.body))).toEqual([...sent].reverse())
  })

  it("reorder on an account whose clock runs ahead holds the calls seconds, not the clock's lead", async () => {
    r = await startReceiver(() => 200)
    expect((await s.sk.post('/v2/test/clock/advance', { seconds: 10 * 86_400 })).status).toBe(200)
    await setRules([{ notify: 'reorder', seconds: 2 }])
    const sent: string[] = []
    for (let i = 0; i < 3; i++) {
      sent.push((await chargeNotifying(s.sk, r.url, 2000 + i)).event.id)
      await sleep(250)
    }
    const due = await Promise.all(sent.map(async (id) => (await storedDeliveries(id))[0]?.due_ms as number))
    for (const ms of due) expect(ms - Date.now()).toBeLessThan(10_000)
    expect(due[0]).toBeGreaterThan(due[1] as number)
    expect(due[1]).toBeGreaterThan(due[2] as number)
    await waitFor('three calls', async () => r.calls.length >= 3, 10_000)
    expect(r.calls.map((c) => eventIdOf(c.body))).toEqual([...sent].reverse())
  })
})
