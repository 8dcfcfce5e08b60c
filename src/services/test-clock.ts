import { AppError } from '../errors.js'
import type { Db } from '../store/db.js'
import type { Scope } from '../store/scope.js'
import { advanceTestClock, testClockOffset } from '../store/test-clocks.js'

export interface TestClock {
  object: 'test_clock'
  /** the account's test-mode time, in the API's timestamp form */
  now: string
  offset_seconds: number
}

/** `ms` since the epoch in the API's timestamp form, to the microsecond. */
function timestampAt(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000Z`
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

  const clockOf = (offset: number | undefined): TestClock => {
    if (offset === undefined) throw new AppError('api_key_invalid', 'Invalid API key provided')
    return { object: 'test_clock', now: timestampAt(Date.now() + offset * 1000), offset_seconds: offset }
  }

  return {
    async read(scope: Scope): Promise<TestClock> {
      testModeOnly(scope, 'GET /v2/test/clock')
      return clockOf(await testClockOffset(db, scope.accountId))
    },
    async advance(scope: Scope, seconds: number): Promise<TestClock> {
      testModeOnly(scope, 'POST /v2/test/clock/advance')
      const clock = clockOf(await advanceTestClock(db, scope.accountId, seconds))
      deps.onAdvanced?.()
      return clock
    },
  }
}

export type TestClockService = ReturnType<typeof testClockService>
