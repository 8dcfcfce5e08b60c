import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { type Config, notifySchedule } from '../config.js'
import type { Vault } from '../crypto/vault.js'
import { findAccount } from '../store/accounts.js'
import type { Db } from '../store/db.js'
import { type ClaimedDelivery, claimDue, nextDueInMs, recordOutcome } from '../store/deliveries.js'
import { notifyHeaders, postNotify, type SendResult } from './send.js'

export interface DeliveryWorkerSettings {
  /** seconds to wait after each failed attempt; one attempt more than there are entries */
  schedule: number[]
  /** how long a receiver has to answer one call */
  timeoutMs: number
  /** how often to look for due deliveries queued by other processes (default 1000) */
  pollMs?: number | undefined
  /** calls in flight at once (default 10) */
  concurrency?: number | undefined
  /**
   * how long a claimed delivery stays out of other workers' reach; if the worker dies mid-call,
   * another takes the delivery up after this (default: timeout + 60 s, well past any call)
   */
  leaseMs?: number | undefined
  /** each wait is lengthened by up to this fraction, at random, so retries spread out (default 0.1) */
  jitter?: number | undefined
}

export interface DeliveryWorkerOptions extends DeliveryWorkerSettings {
  db: Db
  vault: Vault
  logger?: Logger | false | undefined
}

export interface DeliveryWorker {
  /** look for due deliveries now rather than at the next poll */
  wake(): void
  /** stops claiming, waits for the calls in flight to be recorded, then resolves */
  stop(): Promise<void>
}

/** The worker's settings from the environment (JACKDAW_NOTIFY_*). */
export function notifyWorkerSettings(config: Config): DeliveryWorkerSettings {
  return {
    schedule: notifySchedule(config),
    timeoutMs: config.JACKDAW_NOTIFY_TIMEOUT_MS,
    pollMs: config.JACKDAW_NOTIFY_POLL_MS,
    concurrency: config.JACKDAW_NOTIFY_CONCURRENCY,
    leaseMs: config.JACKDAW_NOTIFY_LEASE_MS,
  }
}

/** The smallest wait between two looks at the store, so a busy row cannot make the loop spin. */
const MIN_WAIT_MS = 10
const RECHECK_MS = 30

/**
 * Sends queued notify calls. Each pass claims due deliveries in a short transaction (one worker
 * per delivery, see claimDue), sends them outside any transaction, and records each outcome with
 * the next attempt's time. Any number of workers, in any number of processes, may share a store.
 */
export function startDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { db, vault, schedule, timeoutMs } = opts
  const log = opts.logger ? opts.logger.child({ component: 'notify' }) : undefined
  const pollMs = opts.pollMs ?? 1000
  const concurrency = Math.max(1, opts.concurrency ?? 10)
  const leaseMs = opts.leaseMs ?? timeoutMs + 60_000
  const jitter = opts.jitter ?? 0.1

  let running = true
  const inflight = new Set<Promise<void>>()
  let interrupt: (() => void) | undefined
  let woken = false

  // a wake may come before the transaction that queued the call commits; looking again shortly
  // after finds it without waiting for the next poll
  let rechecks = 0

  const wake = () => {
    woken = true
    rechecks = 3
    interrupt?.()
  }

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || !running) return resolve()
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        interrupt = undefined
        resolve()
      }
      interrupt = done
    })

  async function secretOf(accountId: string, livemode: boolean): Promise<string> {
    const account = await findAccount(db, accountId)
    if (!account) throw new Error('the account no longer exists')
    return vault.decrypt(livemode ? account.webhook_secret_live_enc : account.webhook_secret_test_enc)
  }

  function retryDelayMs(attempt: number, retry: boolean): number | undefined {
    const gap = schedule[attempt - 1]
    if (!retry || gap === undefined) return undefined
    return gap * 1000 * (1 + jitter * Math.random())
  }

  async function attempt(d: ClaimedDelivery): Promise<void> {
    let result: SendResult
    try {
      // the secret is read per attempt, so a rolled secret signs every call after the roll
      const secret = await secretOf(d.account_id, d.livemode)
      result = await postNotify({
        url: d.url,
        body: d.payload,
        headers: notifyHeaders(d.payload, secret, d.id),
        timeoutMs,
        livemode: d.livemode,
      })
    } catch (err) {
      result = { statusCode: null, error: `not sent: ${(err as Error).message}`, durationMs: 0 }
    }
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300
    const retryInMs = succeeded ? undefined : retryDelayMs(d.attempt_count, d.retry)
    try {
      await recordOutcome(db, {
        id: d.id,
        number: d.attempt_count,
        token: d.lease_token,
        startedAt: d.claimed_at,
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        error: result.error,
        succeeded,
        retryInMs,
      })
    } catch (err) {
      // the lease runs out and another claim records this attempt as interrupted and calls again
      log?.error({ err, delivery: d.id, attempt: d.attempt_count }, 'notify outcome not recorded')
      return
    }
    const fields = {
      delivery: d.id,
      attempt: d.attempt_count,
      status_code: result.statusCode,
      error: result.error,
      duration_ms: Math.round(result.durationMs),
    }
    if (succeeded) log?.info(fields, 'notify call delivered')
    else if (retryInMs !== undefined) log?.warn({ ...fields, retry_in_ms: Math.round(retryInMs) }, 'notify call failed')
    else log?.warn(fields, 'notify call failed for the last time')
  }

  function track(p: Promise<void>) {
    const tracked = p.finally(() => {
      inflight.delete(tracked)
      // a freed slot may take a due delivery at once
      wake()
    })
    inflight.add(tracked)
  }

  async function loop() {
    while (running) {
      woken = false
      try {
        const free = concurrency - inflight.size
        let claimed = 0
        if (free > 0) {
          const rows = await claimDue(db, { limit: free, leaseMs, token: randomUUID() })
          claimed = rows.length
          for (const row of rows) track(attempt(row))
        }
        if (!running) break
        if (claimed === free && free > 0) continue
        let wait = pollMs
        if (inflight.size < concurrency) {
          const due = await nextDueInMs(db)
          if (due !== undefined) wait = Math.min(wait, due)
          if (claimed === 0 && rechecks > 0) {
            rechecks--
            wait = Math.min(wait, RECHECK_MS)
          }
        }
        await pause(Math.max(MIN_WAIT_MS, wait))
      } catch (err) {
        if (!running) break
        log?.error({ err }, 'notify worker could not reach the store')
        await pause(pollMs)
      }
    }
  }

  const looping = loop()

  return {
    wake,
    async stop() {
      running = false
      interrupt?.()
      await looping
      await Promise.allSettled([...inflight])
    },
  }
}
