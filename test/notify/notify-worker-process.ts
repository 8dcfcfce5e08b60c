/**
 * One service process for test/notify-multiprocess.test.ts: the app on a PostgreSQL database with
 * its delivery worker, until SIGTERM. Logs go to stdout as JSON lines; the first line says ready.
 */
import pino from 'pino'
import { createApp } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import { NotifyAllowList } from '../../src/services/notify-address.js'
import { openPostgres } from '../../src/store/db.js'

const env = process.env
const db = await openPostgres({
  url: env.JACKDAW_TEST_PG_URL as string,
  poolSize: 5,
})
const vault = new Vault(Buffer.from(env.JACKDAW_TEST_KEY as string, 'base64'))
const logger = pino({ level: 'info' })
const app = await createApp({
  db,
  vault,
  logger,
  // the test's receivers are on this machine
  options: { notifyAllow: NotifyAllowList.parse('127.0.0.1') },
  notify: { schedule: [0.2, 0.5, 1, 2], timeoutMs: 5000, pollMs: 50, concurrency: 4 },
})
await app.ready()
logger.info({ ready: true }, 'ready')

process.once('SIGTERM', async () => {
  await app.close()
  await db.close()
  process.exit(0)
})
