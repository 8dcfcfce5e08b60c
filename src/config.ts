import proxyAddr from '@fastify/proxy-addr'
import { type Static, Type } from 'typebox'
import { Value } from 'typebox/value'
import { DEFAULT_CONNECT_TIMEOUT_MS } from './notify/send.js'
import { NotifyAllowList } from './services/notify-address.js'

/**
 * All configuration comes from the environment and is validated here, once, so a bad value stops
 * the process at start with a message that names the variable.
 */
/** How long a client may take to send a whole request, unless told otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/** The notify calls one account, or one receiving host, may have in flight in a process, unless told. */
export const DEFAULT_NOTIFY_SHARE = 4

/** The fewest characters of the operator's token (JACKDAW_ADMIN_TOKEN, and startJackdaw's adminToken). */
export const ADMIN_TOKEN_MIN_LENGTH = 16

// the longest a Node timer waits (2^31 - 1 ms, about 24.8 days); a longer one fires at once
const MAX_TIMER_MS = 2_147_483_647

const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /** the embedded store's directory: its PostgreSQL cluster, socket and keys; unused with DATABASE_URL */
  JACKDAW_DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  /** base64 of 32 bytes; generated into the data directory for the embedded store when absent */
  JACKDAW_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** the address payers and processors reach this service at, for hosted pages */
  JACKDAW_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** a live-mode processor reached over HTTP; live charges are refused without one */
  JACKDAW_LIVE_PROCESSOR_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  JACKDAW_LIVE_PROCESSOR_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  /** the operator's token for POST and DELETE /v2/accounts; generated into the data directory for the embedded store when absent */
  JACKDAW_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: ADMIN_TOKEN_MIN_LENGTH })),
  /** comma-separated seconds between notify attempts */
  JACKDAW_NOTIFY_SCHEDULE: Type.Optional(Type.String({ pattern: '^\\d+(\\.\\d+)?(,\\d+(\\.\\d+)?)*$' })),
  JACKDAW_NOTIFY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60000, default: 10000 }),
  JACKDAW_NOTIFY_WORKER: Type.Boolean({ default: true }),
  /** how often a notify worker looks for calls queued by other processes */
  JACKDAW_NOTIFY_POLL_MS: Type.Integer({ minimum: 10, maximum: 60000, default: 1000 }),
  /** how long a claimed notify call is held before another worker may take it (its worker died) */
  JACKDAW_NOTIFY_LEASE_MS: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3600000 })),
  /** notify calls one process has in flight at once */
  JACKDAW_NOTIFY_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  /** of those, the most for one account, and the most to one receiving host */
  JACKDAW_NOTIFY_ACCOUNT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_NOTIFY_SHARE }),
  JACKDAW_NOTIFY_HOST_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_NOTIFY_SHARE }),
  /** how long a receiver's connection may take to open, apart from the time it has to answer */
  JACKDAW_NOTIFY_CONNECT_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60000,
    default: DEFAULT_CONNECT_TIMEOUT_MS,
  }),
  /** receivers notify calls may go to besides public addresses: host names, addresses, CIDR ranges */
  JACKDAW_NOTIFY_ALLOW_HOSTS: Type.Optional(Type.String()),
  /** an Idempotency-Key held by a request that died is free again after this long */
  JACKDAW_IDEMPOTENCY_LEASE_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  /** an operation under way with the processor this long is taken for interrupted and finished */
  JACKDAW_RECOVERY_GRACE_MS: Type.Integer({ minimum: 100, maximum: MAX_TIMER_MS, default: 30000 }),
  JACKDAW_RECOVERY_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: MAX_TIMER_MS, default: 5000 }),
  /** a charge waiting this long for its payer (3-D Secure, wallet, QR, OTP) fails with payment_expired; at most 30 days */
  JACKDAW_PAYER_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 2592000, default: 86400 }),
  /** a card's security code is erased this long after its source was made, and the number of a source never used; at most 30 days */
  JACKDAW_SECURITY_CODE_RETENTION_SECONDS: Type.Integer({ minimum: 60, maximum: 2592000, default: 86400 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** requests per window: per secret key, per public key and client address, per address for the rest */
  JACKDAW_RATE_LIMIT: Type.Integer({ minimum: 1, default: 100 }),
  JACKDAW_RATE_WINDOW_MS: Type.Integer({ minimum: 100, maximum: MAX_TIMER_MS, default: 1000 }),
  /** well-formed but unknown keys one client address may send per window before it is refused; 0 counts none */
  JACKDAW_AUTH_FAILURE_LIMIT: Type.Integer({ minimum: 0, default: 20 }),
  JACKDAW_AUTH_FAILURE_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86400, default: 300 }),
  /** the proxies in front of the service, whose X-Forwarded-For names the client: addresses, CIDR ranges, loopback, linklocal, uniquelocal */
  JACKDAW_TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  JACKDAW_BODY_LIMIT: Type.Integer({ minimum: 1024, maximum: 10485760, default: 65536 }),
  /** how long a client may take to send a whole request; a slower one is answered 408 */
  JACKDAW_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600000, default: DEFAULT_REQUEST_TIMEOUT_MS }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
  }),
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {}

export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.keys(ConfigSchema.properties)
  const input: Record<string, unknown> = {}
  for (const name of known) {
    const raw = env[name]
    if (raw !== undefined && raw !== '') input[name] = raw
  }
  const converted = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, input))
  const errors = [...Value.Errors(ConfigSchema, converted)].map((e) => ({
    name: e.instancePath.replace(/^\//, '') || 'configuration',
    message: e.message,
  }))
  // the conversion would take 1.5 for 1 where a whole number is asked for
  for (const name of known) {
    const raw = env[name]
    const schema = (ConfigSchema.properties as Record<string, { type?: string }>)[name]
    if (raw && schema?.type === 'integer' && !/^\s*[+-]?\d+\s*$/.test(raw)) {
      errors.push({ name, message: 'must be a whole number' })
    }
  }
  // the pattern checks the scheme only; an address must also be one a URL can be made of
  for (const name of ['JACKDAW_PUBLIC_URL', 'JACKDAW_LIVE_PROCESSOR_URL', 'REDIS_URL']) {
    const raw = env[name]
    if (raw && (!URL.canParse(raw) || !new URL(raw).hostname)) {
      errors.push({ name, message: 'must be a URL with a host' })
    }
  }
  const key = env.JACKDAW_ENCRYPTION_KEY
  if (key && Buffer.from(key, 'base64').length !== 32) {
    errors.push({ name: 'JACKDAW_ENCRYPTION_KEY', message: 'must be the base64 of 32 bytes (openssl rand -base64 32)' })
  }
  try {
    NotifyAllowList.parse(env.JACKDAW_NOTIFY_ALLOW_HOSTS ?? '')
  } catch (err) {
    errors.push({ name: 'JACKDAW_NOTIFY_ALLOW_HOSTS', message: (err as Error).message })
  }
  // a call still waiting for its receiver would be taken over by another worker, and sent twice
  const { JACKDAW_NOTIFY_LEASE_MS: lease, JACKDAW_NOTIFY_TIMEOUT_MS: timeout } = converted as Partial<Config>
  if (Number.isInteger(lease) && Number.isInteger(timeout) && (lease as number) <= (timeout as number)) {
    errors.push({
      name: 'JACKDAW_NOTIFY_LEASE_MS',
      message: `must be longer than JACKDAW_NOTIFY_TIMEOUT_MS (${timeout})`,
    })
  }
  const proxies = env.JACKDAW_TRUST_PROXY
  if (proxies) {
    try {
      proxyAddr.compile(proxies.split(',').map((p) => p.trim()))
    } catch (err) {
      errors.push({ name: 'JACKDAW_TRUST_PROXY', message: (err as Error).message })
    }
  }
  if (errors.length > 0) {
    const lines = errors.map(({ name, message }) => `  ${name}=${shown(name, env[name] ?? '')}: ${message}`)
    throw new ConfigError(`invalid configuration:\n${[...new Set(lines)].join('\n')}`)
  }
  return converted as Config
}

/** Settings that are secrets: a refused one is named, never printed. */
const SECRET_SETTINGS = new Set(['JACKDAW_ENCRYPTION_KEY', 'JACKDAW_LIVE_PROCESSOR_SECRET', 'JACKDAW_ADMIN_TOKEN'])

/** A refused setting as the start-up error prints it: no secret, and no password of an address. */
function shown(name: string, value: string): string {
  if (SECRET_SETTINGS.has(name)) return `(${value.length} characters, not shown)`
  return JSON.stringify(value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):.*@/i, '$1:***@'))
}

export function notifySchedule(config: Config): number[] {
  const text = config.JACKDAW_NOTIFY_SCHEDULE
  // about 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, then every 12 h up to 3 days: the last call is
  // 65.6 h after the first (72.2 h at most with the jitter); one more would be past 3 days
  if (!text) return [60, 300, 1800, 7200, 18000, 36000, 43200, 43200, 43200, 43200]
  return text.split(',').map(Number)
}

/** The receivers notify calls may go to besides public addresses (JACKDAW_NOTIFY_ALLOW_HOSTS). */
export function notifyAllowList(config: Config): NotifyAllowList {
  return NotifyAllowList.parse(config.JACKDAW_NOTIFY_ALLOW_HOSTS ?? '')
}
