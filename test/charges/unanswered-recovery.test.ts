import { describe, expect, it } from 'vitest'
import { buildApp, cardSource, REDIRECT, testApp } from '../helpers/app.js'
import {
  charge,
  processor,
  RemoteProcessor,
  reversalOwed,
  reversalsSent,
  t,
  useRemoteProcessor,
} from './remote-processor.js'

/**
 * The recovery sweep over what the processor left unanswered: each pass works on every charge at
 * once; what no processor is left to ask, and what a processor deciding in process leaves owed.
 */

useRemoteProcessor()

// Each call to the processor here takes 100 ms; one after another, a sweep pass would have one in
// flight at a time. A processor timing out takes 10 s a call, and a pass must end within its grace.
describe('a recovery sweep pass', () => {
  it('asks for every reversal owed at once', async () => {
    processor.authorizeMode = 'timeout'
    processor.reverseMode = 'timeout'
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await charge()).body.id)
    await reversalsSent()
    for (const id of ids) expect(await reversalOwed(id)).toBe(true)
    processor.reverseMode = 'answer'
    processor.delayMs = 100
    await t.db.query("UPDATE charges SET reversal_asked_at = now() - interval '1 hour' WHERE id = ANY($1)", [ids])
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThanOrEqual(4)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(4)
    for (const id of ids) expect(await reversalOwed(id)).toBe(false)
  })

  it('fails every abandoned payer step at once, each reversed', async () => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await charge({ type: 'wallet_b', redirect: REDIRECT })).body.id)
    processor.delayMs = 100
    await t.db.query(
      "UPDATE charges SET updated_at = now() - interval '1 hour', processing_since = processing_since - interval '1 hour' WHERE id = ANY($1)",
      [ids],
    )
    expect(await t.app.services.charges.expireAbandoned(1000)).toBeGreaterThanOrEqual(3)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(3)
    await reversalsSent()
    for (const id of ids) {
      expect((await t.sk.get(`/v2/charges/${id}`)).body).toMatchObject({ status: 'failed' })
      expect(processor.reversed).toContain(id)
    }
  })

  it('sends every interrupted authorization again at once', async () => {
    processor.holdFirst = true
    // the requests whose processes are taken for dead: their authorizations never come back
    const sources: string[] = []
    for (let i = 0; i < 3; i++) sources.push((await t.sk.post('/v2/sources/', cardSource())).body.id)
    const stalled = sources.map((source) => t.sk.post('/v2/charges/', { amount: 1500, currency: 'usd', source }))
    while (processor.held.size < 3) await new Promise((resolve) => setTimeout(resolve, 10))
    const ids = [...processor.held.keys()]
    processor.delayMs = 100
    await t.db.query(
      "UPDATE charges SET updated_at = now() - interval '1 hour', processing_since = processing_since - interval '1 hour' WHERE id = ANY($1)",
      [ids],
    )
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThanOrEqual(3)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(3)
    for (const id of ids) expect((await t.sk.get(`/v2/charges/${id}`)).body.status).toBe('succeeded')
    for (const release of processor.held.values()) release()
    // a request still waiting when its authorization was finished for it answers the charge as it stands
    for (const res of await Promise.all(stalled)) {
      expect(res.status).toBe(201)
      expect(ids).toContain(res.body.id)
      expect(res.body.status).toBe('succeeded')
    }
  })

  it('settles every interrupted refund at once', async () => {
    const charged: string[] = []
    for (let i = 0; i < 3; i++) charged.push((await charge()).body.id)
    processor.holdFirst = true
    const stalled = charged.map((id) => t.sk.post(`/v2/charges/${id}/refund`, { amount: 500 }))
    while (processor.held.size < 3) await new Promise((resolve) => setTimeout(resolve, 10))
    processor.delayMs = 100
    await t.db.query("UPDATE refunds SET pending_since = now() - interval '1 hour' WHERE charge_id = ANY($1)", [
      charged,
    ])
    expect(await t.app.services.charges.recoverInterrupted(1000)).toBeGreaterThanOrEqual(3)
    expect(processor.mostInFlight).toBeGreaterThanOrEqual(3)
    for (const id of charged) expect((await t.sk.get(`/v2/charges/${id}`)).body.amount_refunded).toBe(500)
    for (const release of processor.held.values()) release()
    for (const res of await Promise.all(stalled)) expect(res.status).toBeLessThan(300)
  })
})

describe('a live charge that expires after its live processor is gone from the configuration', () => {
  it('fails with nothing owed: there is no processor left to ask', async () => {
    const live = new RemoteProcessor()
    const withLive = await testApp({ liveProcessor: live })
    try {
      const src = await withLive.skLive.post('/v2/sources/', { type: 'wallet_b', redirect: REDIRECT })
      const c = await withLive.skLive.post('/v2/charges/', { amount: 900, currency: 'usd', source: src.body.id })
      expect(c.body.status).toBe('pending')
      await withLive.db.query(
        "UPDATE charges SET updated_at = now() - interval '1 hour', processing_since = processing_since - interval '1 hour' WHERE id = $1",
        [c.body.id],
      )
      // the same store, started again without a live processor
      const { app: without } = await buildApp(withLive.db, withLive.vault)
      try {
        expect(await without.services.charges.expireAbandoned(1000)).toBe(1)
      } finally {
        await without.close()
      }
      const expired = (await withLive.skLive.get(`/v2/charges/${c.body.id}`)).body
      expect(expired).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
      expect(await reversalOwed(c.body.id, withLive.db)).toBe(false)
      expect(live.reversed).toEqual([])
    } finally {
      await withLive.close()
    }
  })
})

describe('a processor that decides in process', () => {
  it('has nothing to reverse when its simulated timeout fails a charge', async () => {
    const inProcess = await testApp()
    try {
      const src = await inProcess.sk.post('/v2/sources/', cardSource({ number: '4000000000000036' }))
      const c = await inProcess.sk.post('/v2/charges/', { amount: 100, currency: 'usd', source: src.body.id })
      expect(c.body.failure_data.code).toBe('processor_timeout')
      expect(await reversalOwed(c.body.id, inProcess.db)).toBe(false)
    } finally {
      await inProcess.close()
    }
  })
})
