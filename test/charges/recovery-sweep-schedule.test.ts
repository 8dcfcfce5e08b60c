import { expect, it } from 'vitest'
import type { Services } from '../../src/services/index.js'
import { recoverySweep } from '../../src/services/recovery-sweep.js'

/**
 * The recovery sweep's timing: the next sweep is timed from the end of the last, and one asked for
 * at once (a test clock advanced) waits for the one under way, so that two never run at once
 * however slow the database is.
 */

it('never runs two sweeps at once: on its timer, asked at once, or both', async () => {
  let under = 0
  let most = 0
  let sweeps = 0
  const slow = async () => {
    under += 1
    most = Math.max(most, under)
    await new Promise((resolve) => setTimeout(resolve, 40))
    under -= 1
    sweeps += 1
    return 0
  }
  const services = {
    charges: { recoverInterrupted: slow, expireAbandoned: async () => 0 },
    sources: { eraseOldCardData: async () => 0 },
    idempotency: { purgeExpired: async () => 0 },
    testClock: { advances: async () => '1' },
  } as unknown as Services
  const sweep = recoverySweep(services, { intervalMs: 10, graceMs: 0, clockPollMs: 60_000 }, (err) => {
    throw err
  })
  sweep.start()
  for (let i = 0; i < 8; i++) {
    await new Promise((resolve) => setTimeout(resolve, 15))
    sweep.now()
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  await sweep.stop()
  expect(sweeps).toBeGreaterThan(3)
  expect(most).toBe(1)
})
