import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { type Config, DEFAULT_NOTIFY_SHARE, notifySchedule } from '../config.js'
import type { Vault } from '../crypto/vault.js'
import type { NotifyAllowList, NotifyHostResolver } from '../services/notify-address.js'
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
  /** of those, the most for one account, so that one account's slow receivers leave room for others' (default 4) */
  accountConcurrency?: number | undefined
  /** and the most to one receiving host (host and port), however many accounts name it (default 4) */
  hostConcurrency?: number | undefined
  /** how long a receiver's connection may take to open (default 3000) */
  connectTimeoutMs?: number | undefined
  /** receivers called besides public addresses (JACKDAW_NOTIFY_ALLOW_HOSTS) */
  allow?: NotifyAllowList | undefined
  /** how hosts are resolved; the system's name servers unless given */
  resolver?: NotifyHostResolver | undefined
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
    accountConcurrency: config.JACKDAW_NOTIFY_ACCOUNT_CONCURRENCY,
    hostConcurrency: config.JACKDAW_NOTIFY_HOST_CONCURRENCY,
    connectTimeoutMs: config.JACKDAW_NOTIFY_CONNECT_TIMEOUT_MS,
    leaseMs: config.JACKDAW_NOTIFY_LEASE_MS,
  }
}

/** Who receives a call, for the cap per host: its host and port, as the address names them. */
function receivingHost(url: string): string {
  try {
    return new URL(url).host.toLowerCase()
  } catch {
    return url
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
  const perAccount = Math.max(1, opts.accountConcurrency ?? DEFAULT_NOTIFY_SHARE)
  const perHost = Math.max(1, opts.hostConcurrency ?? DEFAULT_NOTIFY_SHARE)
  const leaseMs = opts.leaseMs ?? timeoutMs + 60_000
  const jitter = opts.jitter ?? 0.1

  let running = true
  const inflight = new Set<Promise<void>>()
  // calls in flight per account and per receiving host
  const byAccount = new Map<string, number>()
  const byHost = new Map<string, number>()
  const count = (map: Map<string, number>, key: string, step: number) => {
    const n = (map.get(key) ?? 0) + step
    if (n > 0) map.set(key, n)
    else map.delete(key)
  }
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
        connectTimeoutMs: opts.connectTimeoutMs,
        allow: opts.allow,
        resolver: opts.resolver,
      })
    } catch (err) {
      log?.warn({ err, delivery: d.id }, 'notify call not sent')
      result = { statusCode: null, error: 'not_sent', durationMs: 0 }
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

  function track(d: ClaimedDelivery) {
    const host = receivingHost(d.url)
    count(byAccount, d.account_id, 1)
    count(byHost, host, 1)
    const tracked = attempt(d).finally(() => {
      count(byAccount, d.account_id, -1)
      count(byHost, host, -1)
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
          // what this pass takes, on top of what is in flight, within the caps
          const accounts = new Map(byAccount)
          const hosts = new Map(byHost)
          const rows = await claimDue(db, {
            limit: free,
            leaseMs,
            token: randomUUID(),
            perAccount,
            skipAccounts: [...byAccount].filter(([, n]) => n >= perAccount).map(([id]) => id),
            take: (due) => {
              const host = receivingHost(due.url)
              if ((accounts.get(due.account_id) ?? 0) >= perAccount || (hosts.get(host) ?? 0) >= perHost) return false
              count(accounts, due.account_id, 1)
              count(hosts, host, 1)
              return true
            },
          })
          claimed = rows.length
          for (const row of rows) track(row)
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
