import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { JackdawError } from '../../src/client/api.js'
import { type RunningJackdaw, startJackdaw } from '../../src/testing/index.js'
import { TEST_CARD } from '../helpers/app.js'

let jackdaw: RunningJackdaw
beforeAll(async () => {
  jackdaw = await startJackdaw()
})
afterAll(() => jackdaw.close())

const card = () => jackdaw.client.sources.create({ type: 'card', card: { ...TEST_CARD } })

describe('faults through the typed client and startJackdaw', () => {
  it('faults.set, get and clear replace, read and remove the rules', async () => {
    expect(await jackdaw.faults.get()).toEqual([])
    const rules = [{ operation: 'charges.create' as const, fault: 'processor_timeout' as const, rate: 1 }]
    expect(await jackdaw.faults.set(rules)).toEqual(rules)
    expect(await jackdaw.faults.get()).toEqual(rules)
    const failed = await jackdaw.client.charges.create({ amount: 900, currency: 'usd', source: (await card()).id })
    expect(failed).toMatchObject({ status: 'failed', failure_data: { code: 'processor_timeout' } })
    await jackdaw.faults.clear()
    expect(await jackdaw.faults.get()).toEqual([])
    const fine = await jackdaw.client.charges.create({ amount: 900, currency: 'usd', source: (await card()).id })
    expect(fine.status).toBe('succeeded')

    const refused = await jackdaw.faults.set([{ operation: 'charges.create' }]).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(JackdawError)
    expect(refused).toMatchObject({ status: 422, code: 'parameter_missing' })
  })

  it('a lost answer is found by the retry the client makes with the same key: one charge', async () => {
    const source = (await card()).id
    const charge = await jackdaw.client.charges.create(
      { amount: 1200, currency: 'usd', source },
      { testFault: 'lost_response', idempotencyKey: `lost-${source}` },
    )
    expect(charge).toMatchObject({ status: 'succeeded', amount: 1200 })
    const made = []
    for await (const c of jackdaw.client.all(jackdaw.client.charges.list)) {
      if (typeof c.source === 'object' && c.source.id === source) made.push(c.id)
    }
    expect(made).toEqual([charge.id])
  })

  it("takes only a fault's name, or a latency in milliseconds, as its type says", async () => {
    const source = (await card()).id
    const slow = await jackdaw.client.charges.create(
      { amount: 1300, currency: 'usd', source },
      { testFault: 'processor_latency=10' },
    )
    expect(slow.status).toBe('succeeded')
    const typo = await jackdaw.client.charges
      // @ts-expect-error: a misspelt fault is a type error, not only a 400 at run time
      .create({ amount: 1300, currency: 'usd', source: (await card()).id }, { testFault: 'lost_reponse' })
      .catch((e: unknown) => e)
    expect(typo).toMatchObject({ status: 400, code: 'header_invalid' })
  })

  it('a rate limit is waited out as its Retry-After says, and the request then runs', async () => {
    const started = Date.now()
    const customer = await jackdaw.client.customers.create(
      { email: 'wait@shop.example', description: 'Waited' },
      { testFault: 'rate_limited' },
    )
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    expect((await jackdaw.client.customers.retrieve(customer.id as string)).email).toBe('wait@shop.example')
  })
})
