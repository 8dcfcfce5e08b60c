import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PaymentRequest } from '../../src/processor/processor.js'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, type Json, type TestApp, testApp } from '../helpers/app.js'

/**
 * A customer's saved card charged twice while it is detached: each charge reads the source and
 * its card number under a lock, so a charge either sees the card attached, with its number, or
 * is refused; none reaches the processor without the number, and a declining card never succeeds.
 */
class RecordingSimulator extends Simulator {
  readonly requests: PaymentRequest[] = []
  override async authorize(req: PaymentRequest) {
    this.requests.push(req)
    return super.authorize(req)
  }
}

const processor = new RecordingSimulator()
let t: TestApp
beforeAll(async () => {
  t = await testApp({ testProcessor: processor })
})
afterAll(() => t.close())

describe('a saved card charged while it is detached', () => {
  it('is declined or refused, never succeeded, and never sent without its number', async () => {
    const outcomes: string[] = []
    for (let round = 0; round < 12; round++) {
      const customer = (await t.sk.post('/v2/customers/', { email: `race${round}@example.com`, description: 'race' }))
        .body.id
      const source = (await t.sk.post('/v2/sources/', cardSource({ number: '4000000000000002' }))).body.id
      expect((await t.sk.post(`/v2/customers/${customer}/sources`, { source })).status).toBe(200)
      const charge = () => t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', customer, source })
      const replies = await Promise.all([
        charge(),
        t.sk.delete(`/v2/customers/${customer}/sources/${source}`),
        charge(),
      ])
      for (const r of [replies[0], replies[2]] as Json[]) {
        if (r.status === 201) {
          expect(r.body.status).toBe('failed')
          outcomes.push(r.body.failure_data.code)
        } else {
          expect(r.status).toBe(400)
          expect(r.body.error.code).toBe('customer_source_mismatch')
          outcomes.push(r.body.error.code)
        }
      }
    }
    for (const req of processor.requests) expect(req.card?.number).toBe('4000000000000002')
    expect(outcomes.every((o) => o === 'card_declined' || o === 'customer_source_mismatch')).toBe(true)
  })
})

describe('a saved card charged while its customer is deleted', () => {
  it('is charged or refused, never a 500, and the customer is gone', async () => {
    const answers: string[] = []
    for (let round = 0; round < 8; round++) {
      const customer = (await t.sk.post('/v2/customers/', { email: `gone${round}@example.com`, description: 'gone' }))
        .body.id
      const source = (await t.sk.post('/v2/sources/', cardSource())).body.id
      expect((await t.sk.post(`/v2/customers/${customer}/sources`, { source })).status).toBe(200)
      const charge = () => t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', customer, source })
      const replies = await Promise.all([charge(), charge(), t.sk.delete(`/v2/customers/${customer}`), charge()])
      expect(replies[2]?.status, JSON.stringify(replies[2]?.body)).toBe(200)
      for (const r of [replies[0], replies[1], replies[3]] as Json[]) {
        answers.push(r.status === 201 ? r.body.status : `${r.status} ${r.body.error.code}`)
      }
      expect((await t.sk.get(`/v2/customers/${customer}`)).status).toBe(404)
    }
    // a charge that came first succeeded; one that came after the delete finds no such customer
    expect(answers.filter((a) => a !== 'succeeded' && a !== '404 resource_missing')).toEqual([])
  })
})

describe('the simulator', () => {
  it('declines a card request that carries no card number', async () => {
    const outcome = await new Simulator().authorize({
      chargeId: 'ch_x',
      livemode: false,
      sourceType: 'card',
      amount: 100,
      currency: 'usd',
      requireAuth: false,
      vaulted: false,
      bankLinked: false,
      holderName: undefined,
      at: new Date().toISOString(),
    })
    expect(outcome.outcome).toBe('declined')
  })
})
