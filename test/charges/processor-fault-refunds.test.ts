import { describe, expect, it } from 'vitest'
import { authorized, processor, t, useFaultyProcessor } from './faulty-processor.js'

/** Refunds when the processor declines or gives no answer (see faulty-processor.ts). */

useFaultyProcessor()

describe('refunds when the processor misbehaves', () => {
  it('a declined refund is recorded failed and its amount given back', async () => {
    const c = await authorized(true)
    processor.mode = 'decline'
    const r = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 300 })
    expect(r.status).toBe(200)
    expect(r.body.refunds).toHaveLength(1)
    expect(r.body.refunds[0].status).toBe('failed')
    expect(r.body.amount_refunded).toBe(0)
    expect(r.body.status).toBe('succeeded')
    processor.mode = 'succeed'
    const full = await t.sk.post(`/v2/charges/${c.id}/refund`)
    expect(full.body).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
  })

  it('a refund whose answer never came stays pending, reserved, and is asked again by the sweep', async () => {
    const c = await authorized(true)
    processor.mode = 'timeout'
    const r = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 1000 })
    expect(r.status).toBe(200)
    expect(r.body.refunds[0].status).toBe('pending')
    // the reservation holds: nothing more can be refunded meanwhile; the status changes, with
    // its event, when the processor has answered
    expect(r.body).toMatchObject({ amount_refunded: 1000, status: 'succeeded' })
    const newest = (await t.sk.get('/v2/events/?limit=1')).body.data[0]
    expect(newest).toMatchObject({ type: 'charge.succeeded', data: { object: { id: c.id } } })
    const more = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 1 })
    expect(more.body.error.code).toBe('charge_not_refundable')
    processor.mode = 'succeed'
    await t.db.query("UPDATE refunds SET pending_since = now() - interval '1 hour' WHERE charge_id = $1", [c.id])
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThan(0)
    const done = (await t.sk.get(`/v2/charges/${c.id}`)).body
    expect(done.refunds[0].status).toBe('succeeded')
    expect(done).toMatchObject({ status: 'refunded', amount_refunded: 1000 })
  })

  it('a pending refund of all that was left that then fails gives its amount back', async () => {
    const c = await authorized(true)
    await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 250 })
    processor.mode = 'timeout'
    const r = await t.sk.post(`/v2/charges/${c.id}/refund`)
    expect(r.body).toMatchObject({ status: 'succeeded', amount_refunded: 1000 })
    expect(r.body.refunds.map((x: { status: string }) => x.status)).toEqual(['succeeded', 'pending'])
    processor.mode = 'decline'
    await t.db.query(
      "UPDATE refunds SET pending_since = now() - interval '1 hour' WHERE charge_id = $1 AND status = 'pending'",
      [c.id],
    )
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThan(0)
    const done = (await t.sk.get(`/v2/charges/${c.id}`)).body
    expect(done).toMatchObject({ status: 'succeeded', amount_refunded: 250 })
    expect(done.refunds.map((x: { status: string }) => x.status)).toEqual(['succeeded', 'failed'])
    processor.mode = 'succeed'
  })

  it('a refund that fails after another succeeded leaves the charge succeeded, with that amount refunded', async () => {
    const c = await authorized(true)
    processor.mode = 'succeed'
    await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 600 })
    processor.mode = 'decline'
    const failed = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 400 })
    expect(failed.body).toMatchObject({ status: 'succeeded', amount_refunded: 600 })
  })

  it('is refunded only once the processor has confirmed refunds of the whole amount, not while one is pending', async () => {
    for (const settles of ['succeed', 'decline'] as const) {
      const c = await authorized(true)
      processor.mode = 'timeout'
      await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 400 })
      processor.mode = 'succeed'
      const rest = await t.sk.post(`/v2/charges/${c.id}/refund`, { amount: 600 })
      expect(rest.body).toMatchObject({ status: 'succeeded', amount_refunded: 1000 })
      expect(rest.body.refunds.map((x: { status: string }) => x.status)).toEqual(['pending', 'succeeded'])
      processor.mode = settles
      await t.db.query(
        "UPDATE refunds SET pending_since = now() - interval '1 hour' WHERE charge_id = $1 AND status = 'pending'",
        [c.id],
      )
      expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThan(0)
      const done = (await t.sk.get(`/v2/charges/${c.id}`)).body
      expect(done, settles).toMatchObject(
        settles === 'succeed'
          ? { status: 'refunded', amount_refunded: 1000 }
          : { status: 'succeeded', amount_refunded: 600 },
      )
      processor.mode = 'succeed'
    }
  })
})
