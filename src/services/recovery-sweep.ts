import type { Services } from './index.js'

export interface RecoverySweepSettings {
  intervalMs: number
  graceMs: number
  payerTimeoutMs?: number | undefined
  /** card data is erased this long after its source was made (docs/api.md, card data) */
  cardDataRetentionMs?: number | undefined
  /**
   * how often to look whether a test clock was advanced in another process (DEFAULT_CLOCK_POLL_MS
   * when absent): the sweep then runs at once, as after an advance in this process
   */
  clockPollMs?: number | undefined
}

export const DEFAULT_CLOCK_POLL_MS = 500

export interface RecoverySweep {
  /** sweeps at once, then `intervalMs` after each sweep ends */
  start(): void
  /** one more sweep after the one under way, if the sweep has started and not stopped */
  now(): void
  /** no sweep starts after this; resolves when the one under way has ended */
  stop(): Promise<void>
}

/**
 * Finishes the operations a dead process left under way longer than `graceMs`, fails charges whose
 * payer has not answered for `payerTimeoutMs`, erases card data past its retention and purges old
 * idempotency records. The next sweep is timed from the end of the last, so sweeps never overlap
 * however slow the database is.
 */
export function recoverySweep(
  services: Services,
  settings: RecoverySweepSettings,
  onError: (err: unknown) => void,
): RecoverySweep {
  let timer: NodeJS.Timeout | undefined
  let clockPoll: NodeJS.Timeout | undefined
  let advances: string | undefined
  let running: Promise<unknown> = Promise.resolve()
  const sweep = () => {
    // the erasure of old card data and of old idempotency records goes on whatever becomes of
    // the charges' part
    const retentionMs = settings.cardDataRetentionMs
    return Promise.all([
      services.charges
        .recoverInterrupted(settings.graceMs)
        .then(() => settings.payerTimeoutMs && services.charges.expireAbandoned(settings.payerTimeoutMs))
        .catch(onError),
      retentionMs && services.sources.eraseOldCardData(retentionMs).catch(onError),
      services.idempotency.purgeExpired().catch(onError),
    ]).finally(() => {
      if (timer) timer.refresh()
    })
  }
  // a sweep, on the timer or asked for at once, starts once the one under way has ended
  const sweepNext = () => {
    running = running.then(() => timer && sweep())
  }
  // one cheap read of a sequence: an advance anywhere moves it on
  const pollClocks = async () => {
    try {
      const seen = await services.testClock.advances()
      if (advances !== undefined && seen !== advances) sweepNext()
      advances = seen
    } catch (err) {
      onError(err)
    }
    if (clockPoll) clockPoll.refresh()
  }
  return {
    now: sweepNext,
    start() {
      timer = setTimeout(sweepNext, settings.intervalMs)
      clockPoll = setTimeout(pollClocks, settings.clockPollMs ?? DEFAULT_CLOCK_POLL_MS)
      void pollClocks()
      sweepNext()
    },
    async stop() {
      clearTimeout(timer)
      clearTimeout(clockPoll)
      timer = undefined
      clockPoll = undefined
      await running
    },
  }
}
