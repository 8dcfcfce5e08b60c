import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type TestApp, testApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

describe('a first source', () => {
  it('is created with a secret key and shows only the last four digits', async () => {
    const res = await t.sk.post('/v2/sources/', cardSource())
    expect(res.status).toBe(200)
    expect(res.body.card.last4).toBe('4242')
    expect(res.text).not.toContain('4242424242424242')
    expect(res.headers['request-id']).toMatch(/^req_/)
  })
})
