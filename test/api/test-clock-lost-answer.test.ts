import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectError } from '../helpers/expect.js'
import { appLosingAnswers } from '../helpers/lost-answers.js'

/**
 * An advance of the test clock whose answer the database connection lost after it moved the clock
 * is a 503; sent again with its Idempotency-Key, even after other advances, it answers the clock as
 * it is, and moves it no further. Another advance moves it as usual.
 */

let t: Awaited<ReturnType<typeof appLosingAnswers>>
beforeAll(async () => {
  t = await appLosingAnswers('Lost clock answers')
})
afterAll(() => t?.close())

describe('an advance whose answer was lost, sent again with its Idempotency-Key', () => {
  it('moves the clock once', async () => {
    const key = { 'idempotency-key': 'advance-an-hour' }
    t.lose.loseAnswerOf((sql) => sql.includes('UPDATE accounts SET test_clock_offset_seconds'))
    expectError(await t.sk.post('/v2/test/clock/advance', { seconds: 3600 }, key), 503, 'service_unavailable')

    // other advances meanwhile, with a key and without
    expect((await t.sk.post('/v2/test/clock/advance', { seconds: 60 }, { 'idempotency-key': 'a-minute' })).status).toBe(
      200,
    )
    expect((await t.sk.post('/v2/test/clock/advance', { seconds: 60 })).body.offset_seconds).toBe(3720)

    const retried = await t.sk.post('/v2/test/clock/advance', { seconds: 3600 }, key)
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body.offset_seconds).toBe(3720)
    expect((await t.sk.get('/v2/test/clock')).body.offset_seconds).toBe(3720)

    // the answer is kept now; another key is another advance
    expect((await t.sk.post('/v2/test/clock/advance', { seconds: 3600 }, key)).body.offset_seconds).toBe(3720)
    const next = await t.sk.post('/v2/test/clock/advance', { seconds: 60 }, { 'idempotency-key': 'another-minute' })
    expect(next.body.offset_seconds).toBe(3780)
  })
})
