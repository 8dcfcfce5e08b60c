import { afterAll, beforeAll, expect } from 'vitest'
import type { AccountKeys } from '../../src/services/accounts.js'
import { type Client, cardSource, client, type TestApp, testApp } from '../helpers/app.js'

/**
 * What the tests of keys, accounts and modes share (auth.test.ts, auth-isolation.test.ts,
 * every-answer.test.ts): an app with a second account, and the steps that make what they call.
 */

export let t: TestApp
export let other: AccountKeys
export let otherSk: Client
export let otherPk: Client

/** One app for the file, with a second account and its test keys. */
export function useAccountsApp(): void {
  beforeAll(async () => {
    t = await testApp()
    other = await t.app.services.accounts.create('Other')
    otherSk = client(t.app, other.sk_test_key)
    otherPk = client(t.app, other.pk_test_key)
  })
  afterAll(() => t.close())
}

export const REQUEST_ID = /^req_[0-9a-f]{24}$/

export const newCustomer = async (c: Client = t.sk, email = 'ann@example.com') => {
  const res = await c.post('/v2/customers/', { email, description: 'a customer' })
  expect(res.status, res.text).toBe(201)
  return res.body.id as string
}
export const newSource = async (c: Client = t.sk) => {
  const res = await c.post('/v2/sources/', cardSource())
  expect(res.status, res.text).toBe(200)
  return res.body.id as string
}
export const customerCount = async () =>
  Number((await t.db.query<{ n: number }>('SELECT count(*) AS n FROM customers')).rows[0]?.n)
