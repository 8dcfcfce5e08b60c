import { expect } from 'vitest'
import { Customer } from '../../src/schemas/customer.js'
import { type Client, cardSource, type TestApp } from '../helpers/app.js'
import { shapeProblems } from '../helpers/shape.js'

/**
 * The steps of the customer tests, on the app `app()` gives when they run (a file's app is made in
 * its beforeAll).
 */
export function customerSteps(app: () => TestApp) {
  let seq = 0
  /** An email no other customer of the run has. */
  const uniqueEmail = (tag = 'c') => `${tag}.${++seq}.${Date.now()}@example.com`

  /** A new customer, answered 201 and shaped as its schema says. */
  async function newCustomer(fields: Record<string, unknown> = {}, c: Client = app().sk) {
    const res = await c.post('/v2/customers/', { email: uniqueEmail(), description: 'A customer', ...fields })
    expect(res.status, res.text).toBe(201)
    expect(shapeProblems(Customer, res.body)).toEqual([])
    return res.body
  }

  async function newSource(c: Client = app().sk, body: unknown = cardSource()) {
    const res = await c.post('/v2/sources/', body)
    expect(res.status, res.text).toBe(200)
    return res.body
  }

  return { uniqueEmail, newCustomer, newSource }
}
