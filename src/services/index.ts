import type { Vault } from '../crypto/vault.js'
import { deliveryService } from '../notify/deliveries.js'
import { checkedProcessor } from '../processor/answers.js'
import type { Processor } from '../processor/processor.js'
import { Simulator } from '../processor/simulator.js'
import type { Db } from '../store/db.js'
import { purgeExpiredKeys } from '../store/idempotency.js'
import { accountService } from './accounts.js'
import { chargeService, type HostedPageUrl } from './charges/index.js'
import { customerService } from './customers.js'
import { eventService } from './events.js'
import { checkNotifyAddress, type NotifyAllowList, type NotifyHostResolver } from './notify-address.js'
import { scenarioService } from './scenarios.js'
import { sourceService } from './sources.js'
import { testClockService } from './test-clock.js'
import { faultableProcessor, testFaultService } from './test-faults.js'

export interface ServiceOptions {
  /** the address payers reach this service at, for hosted pages */
  publicUrl?: string | undefined
  /**
   * the address this process listens at: hosted-page links made outside a request (the recovery
   * sweep finishing an authorization after a crash) use it when no public URL is set
   */
  listenUrl?: string | undefined
  /** the live-mode processor; live charges are refused without one */
  liveProcessor?: Processor | undefined
  /** the test-mode processor; the built-in simulator unless a test replaces it */
  testProcessor?: Processor | undefined
  /**
   * called when a notify call is queued or requeued, so a worker in this process can look at once
   * rather than at its next poll; may run before the queueing transaction commits
   */
  onNotifyQueued?: (() => void) | undefined
  /** called when an account's test clock moves forward, so that the recovery sweep can run at once */
  onTestClockAdvanced?: (() => void) | undefined
  /** how the hosts of notify addresses are resolved; the system's name servers unless given */
  notifyResolver?: NotifyHostResolver | undefined
  /**
   * receivers notify calls may go to besides public addresses, in both modes (an operator's
   * JACKDAW_NOTIFY_ALLOW_HOSTS); none unless given. The app's delivery worker uses it too.
   */
  notifyAllow?: NotifyAllowList | undefined
  /**
   * how long a charge waits for its payer before the recovery sweep fails it: the payment_expired
   * scenario moves the test clock past it (JACKDAW_PAYER_TIMEOUT_SECONDS' default unless given)
   */
  payerTimeoutMs?: number | undefined
}

/**
 * The one place where use cases get their dependencies. `hostedPageUrl` makes the hosted-page
 * links of charges decided outside a request (the recovery sweep).
 */
export function buildServices(deps: { db: Db; vault: Vault; options: ServiceOptions; hostedPageUrl: HostedPageUrl }) {
  const { db, vault, options } = deps
  const onQueued = options.onNotifyQueued
  const events = eventService({ db, onNotifyQueued: onQueued })
  const notifyCheck = (url: string, livemode: boolean) =>
    checkNotifyAddress(url, livemode, options.notifyResolver, options.notifyAllow)
  const sources = sourceService({ db, vault, checkNotifyAddress: notifyCheck })
  const customers = customerService({ db })
  const charges = chargeService({
    db,
    vault,
    events: events.recorder,
    // every answer of a processor is checked before it is recorded (processor/answers.ts); test
    // mode's processor takes the faults a request is given (services/test-faults.ts)
    processors: {
      test: faultableProcessor(checkedProcessor(options.testProcessor ?? new Simulator())),
      live: options.liveProcessor && checkedProcessor(options.liveProcessor),
    },
    hostedPageUrl: deps.hostedPageUrl,
    payerTimeoutMs: options.payerTimeoutMs,
  })
  const testClock = testClockService({ db, onAdvanced: () => options.onTestClockAdvanced?.() })
  return {
    accounts: accountService({ db, vault }),
    sources,
    customers,
    events,
    deliveries: deliveryService({ db, onQueued }),
    charges,
    testClock,
    testFaults: testFaultService({ db }),
    scenarios: scenarioService({
      sources,
      customers,
      charges,
      testClock,
      checkNotifyAddress: notifyCheck,
      payerTimeoutMs: options.payerTimeoutMs,
    }),
    /** Idempotency records are kept 24 hours; the recovery sweep purges older ones. */
    idempotency: { purgeExpired: () => purgeExpiredKeys(db) },
  }
}

export type Services = ReturnType<typeof buildServices>
