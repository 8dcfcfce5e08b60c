import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { isIPv6 } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { createApp } from './app.js'
import { type Config, ConfigError, notifyAllowList, parseConfig } from './config.js'
import { randomHex } from './crypto/random.js'
import { makeLogger } from './logger.js'
import { notifyWorkerSettings } from './notify/worker.js'
import { liveProcessorOf } from './processor/live.js'
import { openRedis } from './redis.js'
import { accountService } from './services/accounts.js'
import { EmbeddedStoreError } from './store/data-dir.js'
import { SchemaMismatchError } from './store/migrate.js'
import { openStore, type Store } from './store/open.js'

export interface TestKeys {
  account: string
  sk_test_key: string
  pk_test_key: string
}

/**
 * Makes the default account on an empty store. The embedded store keeps that account's test keys
 * beside its data, so that every start can print them: the secret key encrypted with the store's
 * key, as every secret at rest is (in the store itself secret keys are kept only as hashes).
 */
export async function defaultAccount(config: Config, store: Store): Promise<TestKeys | undefined> {
  const accounts = accountService(store)
  const keysFile = path.join(config.JACKDAW_DATA_DIR, 'test-keys.json')
  const embedded = !config.DATABASE_URL
  const keep = (keys: TestKeys) => {
    const kept = {
      account: keys.account,
      pk_test_key: keys.pk_test_key,
      sk_test_key_enc: store.vault.encrypt(keys.sk_test_key),
    }
    writeFileSync(keysFile, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 })
  }
  if (!(await accounts.first())) {
    const created = await accounts.create('Default account')
    const keys = { account: created.id, sk_test_key: created.sk_test_key, pk_test_key: created.pk_test_key }
    if (embedded) keep(keys)
    return keys
  }
  if (!embedded || !existsSync(keysFile)) return undefined
  const kept = JSON.parse(readFileSync(keysFile, 'utf8')) as Omit<TestKeys, 'sk_test_key'> & { sk_test_key_enc: string }
  const keys = {
    account: kept.account,
    pk_test_key: kept.pk_test_key,
    sk_test_key: store.vault.decrypt(kept.sk_test_key_enc),
  }
  // keys rolled since (jackdaw account roll-key printed the new ones) are not shown as if they worked
  const works = (key: string) =>
    accounts.authenticate(key).then(
      () => true,
      () => false,
    )
  return (await works(keys.sk_test_key)) && (await works(keys.pk_test_key)) ? keys : undefined
}

/**
 * The operator's token for POST and DELETE /v2/accounts: JACKDAW_ADMIN_TOKEN, or on the embedded
 * store one made at the first start and kept beside the test keys, encrypted with the store's key,
 * so that every start can print it. `kept` says it came from the data directory.
 */
export function adminTokenOf(config: Config, store: Store): { token: string; kept: boolean } | undefined {
  if (config.JACKDAW_ADMIN_TOKEN) return { token: config.JACKDAW_ADMIN_TOKEN, kept: false }
  if (config.DATABASE_URL) return undefined
  const file = path.join(config.JACKDAW_DATA_DIR, 'admin-token.json')
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { admin_token_enc: string }
    return { token: store.vault.decrypt(kept.admin_token_enc), kept: true }
  }
  const token = `jdadm_${randomHex(24)}`
  writeFileSync(file, `${JSON.stringify({ admin_token_enc: store.vault.encrypt(token) }, null, 2)}\n`, { mode: 0o600 })
  return { token, kept: true }
}

export function banner(
  config: Config,
  address: string,
  store: Store,
  keys: TestKeys | undefined,
  workers: number,
  admin?: { token: string; kept: boolean },
): string {
  const server = store.embedded
  const lines = [
    `Jackdaw listening on ${address}${workers > 1 ? ` (${workers} processes)` : ''}`,
    server
      ? `  store: embedded PostgreSQL ${server.version}; reach it with: ${server.psql}`
      : '  store: PostgreSQL (DATABASE_URL)',
    `  API reference: ${address}/v2/docs`,
    `  dashboard: ${address}/dashboard (sign in with a key)`,
  ]
  lines.push(
    config.JACKDAW_NOTIFY_ALLOW_HOSTS
      ? `  notify calls may also go to: ${config.JACKDAW_NOTIFY_ALLOW_HOSTS}`
      : '  notify calls go to public addresses only; for a receiver on this machine, start with JACKDAW_NOTIFY_ALLOW_HOSTS=127.0.0.1,localhost',
  )
  if (keys) {
    lines.push(`  test secret key: ${keys.sk_test_key}`, `  test public key: ${keys.pk_test_key}`)
    lines.push(`  try: curl -u ${keys.sk_test_key}: ${address}/v2/me`)
    if (admin?.kept) lines.push(`  admin token (POST /v2/accounts): ${admin.token}`)
  } else {
    lines.push('  keys: `jackdaw account create --name NAME` makes an account and prints its keys')
  }
  return `${lines.join('\n')}\n`
}

/**
 * The address this service listens at, as a payer would type it: a process bound to every
 * interface names its host. Undefined for port 0, whose number is known only once listening.
 */
export function listenUrlOf(config: Pick<Config, 'HOST' | 'PORT'>): string | undefined {
  if (config.PORT === 0) return undefined
  const wildcard = config.HOST === '0.0.0.0' || config.HOST === '::' || config.HOST === '[::]'
  const host = wildcard ? os.hostname() : config.HOST
  return `http://${isIPv6(host) ? `[${host}]` : host}:${config.PORT}`
}

/** One API process: open the store, build the app, listen; close cleanly on SIGINT/SIGTERM. */
export async function serve(config: Config, opts: { quiet?: boolean } = {}) {
  const logger = makeLogger(config)
  const liveProcessor = liveProcessorOf(config)
  const store = await openStore(config, { onServerLost: serverLost(logger) })
  const redis = config.REDIS_URL
    ? openRedis(config.REDIS_URL, (err) => logger.warn({ err: err.message }, 'redis unavailable'))
    : undefined
  let running: Awaited<ReturnType<typeof listening>>
  try {
    running = await listening(config, store, { logger, liveProcessor, redis, quiet: opts.quiet })
  } catch (err) {
    // a start that fails leaves no embedded server running behind it
    redis?.disconnect()
    await store.db.close().catch(() => {})
    throw err
  }

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    logger.info({ signal }, 'shutting down')
    await running.close()
    await store.db.close()
    redis?.disconnect()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  return running
}

/** The app of `serve` on the open store, listening; closed again when it cannot listen. */
async function listening(
  config: Config,
  store: Store,
  opts: { logger: Logger; liveProcessor: ReturnType<typeof liveProcessorOf>; redis?: Redis; quiet?: boolean },
) {
  const { logger, liveProcessor, redis } = opts
  const keys = opts.quiet ? undefined : await defaultAccount(config, store)
  const admin = adminTokenOf(config, store)
  const app = await createApp({
    db: store.db,
    vault: store.vault,
    logger,
    bodyLimit: config.JACKDAW_BODY_LIMIT,
    requestTimeoutMs: config.JACKDAW_REQUEST_TIMEOUT_MS,
    options: {
      publicUrl: config.JACKDAW_PUBLIC_URL,
      listenUrl: listenUrlOf(config),
      liveProcessor,
      notifyAllow: notifyAllowList(config),
    },
    notify: config.JACKDAW_NOTIFY_WORKER ? notifyWorkerSettings(config) : undefined,
    rateLimit: { max: config.JACKDAW_RATE_LIMIT, windowMs: config.JACKDAW_RATE_WINDOW_MS, redis },
    authFailures:
      config.JACKDAW_AUTH_FAILURE_LIMIT > 0
        ? { max: config.JACKDAW_AUTH_FAILURE_LIMIT, windowSeconds: config.JACKDAW_AUTH_FAILURE_WINDOW_SECONDS, redis }
        : undefined,
    trustProxy: config.JACKDAW_TRUST_PROXY,
    recovery: {
      intervalMs: config.JACKDAW_RECOVERY_INTERVAL_MS,
      graceMs: config.JACKDAW_RECOVERY_GRACE_MS,
      payerTimeoutMs: config.JACKDAW_PAYER_TIMEOUT_SECONDS * 1000,
      cardDataRetentionMs: config.JACKDAW_SECURITY_CODE_RETENTION_SECONDS * 1000,
    },
    idempotencyLeaseSeconds: config.JACKDAW_IDEMPOTENCY_LEASE_SECONDS,
    adminToken: admin?.token,
  })
  try {
    const address = await app.listen({ port: config.PORT, host: config.HOST })
    if (!opts.quiet) process.stdout.write(banner(config, address, store, keys, 1, admin))
  } catch (err) {
    await app.close().catch(() => {})
    throw err
  }
  return app
}

/** A service whose embedded server died stops, saying so, rather than answer every request with an error. */
export function serverLost(logger: Logger) {
  return (err: Error) => {
    logger.fatal({ err: err.message }, 'the embedded PostgreSQL server stopped')
    process.stderr.write(`jackdaw: ${err.message}\n`)
    process.exit(1)
  }
}

export function explainStartupError(err: unknown, host = process.env.HOST): string {
  if (err instanceof ConfigError || err instanceof EmbeddedStoreError || err instanceof SchemaMismatchError)
    return err.message
  const code = err instanceof Error && 'code' in err ? err.code : undefined
  if (code === 'EADDRINUSE') return `the port is in use: ${(err as Error).message}; set PORT to another port`
  if (code === 'ECONNREFUSED') {
    const store = process.env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : 'the embedded PostgreSQL'
    return `cannot reach ${store}: ${(err as Error).message}`
  }
  const hostname = (err as { hostname?: unknown }).hostname
  if ((code === 'ENOTFOUND' || code === 'EAI_AGAIN') && hostname !== undefined && hostname === host) {
    return `HOST names no address of this machine to listen on: ${(err as Error).message}`
  }
  if (code === 'EADDRNOTAVAIL') return `HOST names no address of this machine to listen on: ${(err as Error).message}`
  return err instanceof Error ? (err.stack ?? err.message) : String(err)
}

export async function runMain(run: () => Promise<unknown>) {
  try {
    await run()
  } catch (err) {
    process.stderr.write(`jackdaw: ${explainStartupError(err)}\n`)
    process.exit(1)
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runMain(() => serve(parseConfig()))
}
