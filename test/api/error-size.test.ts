import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, type TestApp, testApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

describe('an error answer stays small whatever the request', () => {
  it('lists the first 50 of 5 000 unknown fields and counts them all, in an answer smaller than the body', async () => {
    const card: Record<string, string> = { ...cardSource().card }
    for (let i = 0; i < 5_000; i++) card[`f${String(i).padStart(4, '0')}`] = 'x'
    const body = JSON.stringify({ type: 'card', card })
    expect(body.length).toBeGreaterThan(45_000)
    const res = await t.pk.post('/v2/sources/', body)
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'parameter_unknown', param: 'card.f0000' })
    expect(res.body.error.detail).toHaveLength(50)
    expect(res.body.error.detail[0]).toMatchObject({ loc: ['body', 'card', 'f0000'], type: 'additionalProperties' })
    expect(res.body.error.message).toMatch(
      /^5000 problems \(detail lists the first 50\): card\.f0000 is not a known field;/,
    )
    expect(res.body.error.message.length).toBeLessThanOrEqual(1000)
    expect(res.text.length).toBeLessThan(body.length / 4)
  })

  it('shortens a very long field name wherever the answer names it', async () => {
    const name = `k${'y'.repeat(60_000)}`
    const body = JSON.stringify({ ...cardSource(), [name]: 1 })
    const res = await t.pk.post('/v2/sources/', body)
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('parameter_unknown')
    expect(res.body.error.param).toMatch(/^kyyy+…$/)
    expect(res.body.error.param.length).toBeLessThanOrEqual(200)
    expect(res.body.error.detail[0].loc[1]).toBe(res.body.error.param)
    expect(res.text.length).toBeLessThan(3_000)
  })
})
