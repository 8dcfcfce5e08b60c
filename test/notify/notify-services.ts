import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { type Harness, harness, micros, type Receiver, type Service, startReceiver } from './notify-harness.js'

/**
 * What the tests of notify delivery share (notify-delivery.test.ts, notify-failed-calls.test.ts,
 * notify-network.test.ts): services and receivers opened for one test and closed after it.
 */

let h: Harness
/** What a test opened, closed after it in the reverse order. */
export const cleanup: (() => Promise<void>)[] = []

/** One harness for the file, and what each test opened closed after it. */
export function useNotifyServices(): void {
  beforeAll(async () => {
    h = await harness()
  })
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f()
  })
  afterAll(() => h.close())
}

export async function service(...args: Parameters<Harness['open']>): Promise<Service> {
  const s = await h.open(...args)
  cleanup.push(() => s.close())
  return s
}

export async function receiver(answer: Receiver['answer']): Promise<Receiver> {
  const r = await startReceiver(answer)
  cleanup.push(() => r.close())
  return r
}

/** Attempt start times must be at least the schedule's gaps apart (jitter only lengthens them). */
export function expectSpacing(attempts: { started_at: string }[], scheduleSeconds: number[]) {
  for (let i = 1; i < attempts.length; i++) {
    const gapMicros = micros(attempts[i]!.started_at) - micros(attempts[i - 1]!.started_at)
    expect(gapMicros).toBeGreaterThanOrEqual((scheduleSeconds[i - 1] as number) * 1_000_000)
  }
}
