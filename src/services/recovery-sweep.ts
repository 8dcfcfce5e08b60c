import type { Services } from './index.js'

export interface RecoverySweepSettings {
  intervalMs: number
  graceMs: number
  payerTimeoutMs?: number | undefined
  /** card data is erased this long after its source was made (docs/api.md, card data) */
  cardDataRetentionMs?: number | undefined
}

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
  let running: Promise<unknown> = Promise.resolve()
  const sweep = () => {
    // the erasure of old card data and of old idempotency records goes on whatever becomes of
    // the charges' part
    const retentionMs = settings.cardDataRetentionMs
    running = Promise.all([
      services.charges
        .recoverInterrupted(settings.graceMs)
        .then(() => settings.payerTimeoutMs && services.charges.expireAbandoned(settings.payerTimeoutMs))
        .catch(onError),
      retentionMs && services.sources.eraseOldCardData(retentionMs).catch(onError),
      services.idempotency.purgeExpired().catch(onError),
    ]).finally(() => {
      if (timer) timer.refresh()
    })
    return running
  }
  return {
    now() {
      running = running.then(() => timer && sweep())
    },
    start() {
      timer = setTimeout(sweep, settings.intervalMs)
      sweep()
    },
    async stop() {
      clearTimeout(timer)
      timer = undefined
      await running
    },
  }
}
