/**
 * `jackdaw/testing`: the service in a test suite's own process. startJackdaw() serves the API on
 * a free port of 127.0.0.1 over a fresh database, with an account of its own, so that every test
 * file (or every test) gets a payment service nothing else writes to.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { Value } from 'typebox/value'
import { createApp } from '../app.js'
import { createClient, type JackdawClient, type TestFaultRule } from '../client/api.js'
import { ADMIN_TOKEN_MIN_LENGTH, parseConfig } from '../config.js'
import { Vault } from '../crypto/vault.js'
import { NewAccount } from '../schemas/account.js'
import type { AccountKeys } from '../services/accounts.js'
import { NotifyAllowList } from '../services/notify-address.js'
import { openPostgres } from '../store/db.js'
import { freshDatabase } from './postgres.js'

const DEFAULTS = parseConfig({})

export type { JackdawClient, TestFaultRule } from '../client/api.js'
export { POSTGRES_URL_VARIABLE } from './postgres.js'
export type { AccountKeys }

export interface StartOptions {
  /** the account's name, 1 to 100 characters; `Test account` when left out */
  accountName?: string
  /** seconds between notify attempts after a failed one; a second each unless told */
  notifySchedule?: number[]
  /** the operator's token, at least 16 characters, so that the suite may make and remove accounts (POST /v2/accounts) */
  adminToken?: string
  /**
   * true: the account is deterministic (docs/testing.md, Deterministic mode): its test-mode ids
   * come from `seed` and its test clock stands at 2030-01-01T00:00:00Z until advanced
   */
  deterministic?: boolean
  /** what a deterministic account's ids are made from */
  seed?: string | number
}

/** The account's test clock, through the typed client. */
export interface TestClockControl {
  /** the account's test-mode time */
  now(): Promise<string>
  /** moves it forward by `seconds` (1 to a year); answers the new time */
  advance(seconds: number): Promise<string>
}

export interface RunningJackdaw {
  /** where the API answers, e.g. http://127.0.0.1:41234 */
  url: string
  /** the name of its database on the run's PostgreSQL, to look at with psql while a test runs */
  database: string
  /** the account's four keys and two webhook secrets */
  keys: AccountKeys
  /** the typed client (jackdaw/client), with the account's test secret key */
  client: JackdawClient
  /** the account's test clock */
  clock: TestClockControl
  /** the account's test-mode fault rules (docs/testing.md, Faults on demand) */
  faults: TestFaultControl
  /** stops the service and drops its database */
  close(): Promise<void>
}

export interface TestFaultControl {
  get(): Promise<TestFaultRule[]>
  /** replaces every rule of the account */
  set(rules: TestFaultRule[]): Promise<TestFaultRule[]>
  clear(): Promise<void>
}

/**
 * Starts the service in this process on a fresh database of the run's PostgreSQL (the server
 * JACKDAW_TESTING_POSTGRES_URL names, or one embedded server per process, started at the first
 * call), with its notify worker and recovery sweep, and makes an account.
 */
export async function startJackdaw(options: StartOptions = {}): Promise<RunningJackdaw> {
  // as POST /v2/accounts refuses them: a seed alone, or a deterministic account without one
  if (options.seed !== undefined && !options.deterministic) {
    throw new TypeError('startJackdaw: a seed makes ids only with deterministic: true')
  }
  if (options.deterministic && options.seed === undefined) {
    throw new TypeError('startJackdaw: deterministic: true needs a seed')
  }
  if (options.seed !== undefined && !Value.Check(NewAccount.properties.seed, options.seed)) {
    throw new TypeError(
      'startJackdaw: seed must be a string of 1 to 100 characters or a whole number from 0 to 2^53 − 1',
    )
  }
  // as POST /v2/accounts refuses a name, and the service refuses JACKDAW_ADMIN_TOKEN
  const name = options.accountName ?? 'Test account'
  if (!Value.Check(NewAccount.properties.name, name)) {
    throw new TypeError('startJackdaw: accountName must be 1 to 100 characters')
  }
  if (options.adminToken !== undefined && options.adminToken.length < ADMIN_TOKEN_MIN_LENGTH) {
    throw new TypeError(
      `startJackdaw: adminToken must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters, as JACKDAW_ADMIN_TOKEN must`,
    )
  }
  const database = await freshDatabase()
  const db = await openPostgres({ url: database.url, poolSize: 5 })
  const vault = new Vault(randomBytes(32))
  const app = await createApp({
    db,
    vault,
    logger: false,
    notify: {
      schedule: options.notifySchedule ?? [1, 1, 1],
      timeoutMs: 5_000,
      pollMs: 200,
      concurrency: 5,
    },
    // the service's own times for a payer who never answers and for unused card data, as
    // docs/testing.md tells them and the test clock moves past them
    recovery: {
      intervalMs: 1_000,
      graceMs: 30_000,
      payerTimeoutMs: DEFAULTS.JACKDAW_PAYER_TIMEOUT_SECONDS * 1000,
      cardDataRetentionMs: DEFAULTS.JACKDAW_SECURITY_CODE_RETENTION_SECONDS * 1000,
    },
    // the suite's own receivers run on this machine
    options: { notifyAllow: NotifyAllowList.parse('127.0.0.1,::1,localhost') },
    adminToken: options.adminToken,
  })
  try {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const keys = await app.services.accounts.create(
      name,
      options.seed === undefined ? undefined : { seed: options.seed },
    )
    const { port } = app.server.address() as AddressInfo
    const url = `http://127.0.0.1:${port}`
    const client = createClient({ apiKey: keys.sk_test_key, baseUrl: url })
    let closed: Promise<void> | undefined
    return {
      url,
      database: database.name,
      keys,
      client,
      clock: {
        now: async () => (await client.testClock.retrieve()).now,
        advance: async (seconds) => (await client.testClock.advance({ seconds })).now,
      },
      faults: {
        get: async () => (await client.testFaults.retrieve()).rules,
        set: async (rules) => (await client.testFaults.update(rules)).rules,
        clear: async () => {
          await client.testFaults.update([])
        },
      },
      close() {
        closed ??= (async () => {
          await app.close()
          await db.close()
          await database.drop()
        })()
        return closed
      },
    }
  } catch (err) {
    await app.close()
    await db.close()
    await database.drop()
    throw err
  }
}
