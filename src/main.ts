import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import { createApp } from './app.js'
import { type Config, ConfigError, parseConfig } from './config.js'
import { StoreLockedError } from './store/db.js'
import { openStore } from './store/open.js'

interface TestKeys {
  account: string
  sk_test_key: string
  pk_test_key: string
}

/**
 * Opens the store, migrates, makes a default account on an empty store and listens. The embedded
 * store keeps the default account's test keys beside its data so every start can print them.
 */
export async function serve(config: Config) {
  const logger = pino({
    level: config.LOG_LEVEL,
    redact: { paths: ['req.headers.authorization', '*.card.number', '*.card.cvc'], censor: '[redacted]' },
  })
  const store = await openStore(config)
  const app = await createApp({
    db: store.db,
    vault: store.vault,
    logger,
    bodyLimit: config.JACKDAW_BODY_LIMIT,
    options: { publicUrl: config.JACKDAW_PUBLIC_URL },
  })

  let testKeys: TestKeys | undefined
  const keysFile = path.join(config.JACKDAW_DATA_DIR, 'test-keys.json')
  const embedded = !config.DATABASE_URL
  if (!(await app.services.accounts.first())) {
    const created = await app.services.accounts.create('Default account')
    testKeys = { account: created.id, sk_test_key: created.sk_test_key, pk_test_key: created.pk_test_key }
    if (embedded) writeFileSync(keysFile, `${JSON.stringify(testKeys, null, 2)}\n`, { mode: 0o600 })
  } else if (embedded && existsSync(keysFile)) {
    testKeys = JSON.parse(readFileSync(keysFile, 'utf8')) as TestKeys
  }

  const address = await app.listen({ port: config.PORT, host: config.HOST })
  const lines = [
    `Jackdaw listening on ${address}`,
    `  store: ${embedded ? `embedded, ${path.resolve(config.JACKDAW_DATA_DIR)}` : 'PostgreSQL'}`,
  ]
  lines.push(`  API reference: ${address}/v2/docs`)
  if (testKeys) {
    lines.push(`  test secret key: ${testKeys.sk_test_key}`, `  test public key: ${testKeys.pk_test_key}`)
    lines.push(`  try: curl -u ${testKeys.sk_test_key}: ${address}/v2/me`)
  } else {
    lines.push('  keys: `jackdaw account create --name NAME` makes an account and prints its keys')
  }
  process.stdout.write(`${lines.join('\n')}\n`)

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    logger.info({ signal }, 'shutting down')
    await app.close()
    await store.db.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  return app
}

export function explainStartupError(err: unknown): string {
  if (err instanceof ConfigError || err instanceof StoreLockedError) return err.message
  if (err instanceof Error && 'code' in err && err.code === 'EADDRINUSE') {
    return `the port is in use: ${err.message}; set PORT to another port`
  }
  if (err instanceof Error && 'code' in err && err.code === 'ECONNREFUSED') {
    return `cannot reach PostgreSQL at DATABASE_URL: ${err.message}`
  }
  return err instanceof Error ? (err.stack ?? err.message) : String(err)
}

const isEntry = process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname
if (isEntry) {
  try {
    await serve(parseConfig())
  } catch (err) {
    process.stderr.write(`jackdaw: ${explainStartupError(err)}\n`)
    process.exit(1)
  }
}
