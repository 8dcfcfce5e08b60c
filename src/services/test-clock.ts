import { MAX_CLOCK_OFFSET_SECONDS } from '../domain/time.js'
import { AppError, invalidParams } from '../errors.js'
import type { Db } from '../store/db.js'
import type { Scope } from '../store/scope.js'
import { advanceTestClock, type ClockReading, testClock, testClockAdvances } from '../store/test-clocks.js'

export interface TestClock {
  object: 'test_clock'
  /** the account's test-mode time, in the API's timestamp form */
  now: string
  offset_seconds: number
}

/**
 * Each account's test clock: its test-mode time, which runs with the real time and is moved
 * forward by advance, never back. `onAdvanced` is told of each advance (the recovery sweep then
 * runs at once rather than at its next interval). Live mode has none: its operations answer as if they did not
 * exist.
 */
export function testClockService(deps: { db: Db; onAdvanced?: (() => void) | undefined }) {
  const { db } = deps

  function testModeOnly(scope: Scope, route: string) {
    if (scope.livemode) throw new AppError('route_missing', `No route ${route}`)
  }

  const clockOf = (reading: ClockReading | undefined): TestClock => {
    if (reading === undefined) throw new AppError('api_key_invalid', 'Invalid API key provided')
    return { object: 'test_clock', now: reading.now, offset_seconds: reading.offset }
  }

  return {
    async read(scope: Scope): Promise<TestClock> {
      testModeOnly(scope, 'GET /v2/test/clock')
      return clockOf(await testClock(db, scope.accountId))
    },
    /** `idempotencyKey`: the key as kept; a retry with it of an advance whose answer was lost moves nothing */
    async advance(scope: Scope, seconds: number, idempotencyKey?: string): Promise<TestClock> {
      testModeOnly(scope, 'POST /v2/test/clock/advance')
      const reading = await advanceTestClock(db, scope.accountId, seconds, MAX_CLOCK_OFFSET_SECONDS, idempotencyKey)
      const clock = clockOf(reading)
      if (reading?.repeated) return clock
      if (reading?.moved === false) {
        throw invalidParams([
          {
            code: 'parameter_invalid',
            param: 'seconds',
            msg: `The test clock runs at most ${MAX_CLOCK_OFFSET_SECONDS} seconds (100 years) ahead; it is ${clock.offset_seconds} seconds ahead now`,
          },
        ])
      }
      deps.onAdvanced?.()
      return clock
    },
    /** changes whenever any account's clock is advanced, by any process */
    advances: () => testClockAdvances(db),
  }
}

export type TestClockService = ReturnType<typeof testClockService>
