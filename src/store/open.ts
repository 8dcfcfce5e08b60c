import { createHmac } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Config } from '../config.js'
import { ConfigError } from '../config.js'
import { loadOrCreateKeyFile, parseMasterKey, timingSafeEqualText, Vault } from '../crypto/vault.js'
import { type Db, openPostgres } from './db.js'
import { type EmbeddedServer, startEmbedded } from './embedded.js'
import { migrate } from './migrate.js'

export interface Store {
  db: Db
  vault: Vault
  /** the embedded server, when the store is the embedded one */
  embedded?: EmbeddedServer
}

export interface OpenOptions {
  /** a command of the CLI: use the embedded server a running service owns, rather than refuse */
  shared?: boolean
  /** told when the embedded server goes away under the process that owns it */
  onServerLost?: (err: Error) => void
}

/**
 * PostgreSQL at DATABASE_URL when it is set, else the embedded server on the data directory;
 * migrated, and its encryption key checked. Closing the store's `db` stops an embedded server
 * this process started; a store that cannot be opened leaves none running.
 */
export async function openStore(config: Config, opts: OpenOptions = {}): Promise<Store> {
  if (config.DATABASE_URL) {
    if (!config.JACKDAW_ENCRYPTION_KEY) {
      throw new ConfigError(
        'JACKDAW_ENCRYPTION_KEY is required with DATABASE_URL (the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)',
      )
    }
    const masterKey = parseMasterKey(config.JACKDAW_ENCRYPTION_KEY)
    const db = await openPostgres({ url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE }).catch(
      (err: unknown) => {
        throw new ConfigError(`DATABASE_URL: cannot connect to PostgreSQL there: ${(err as Error).message}`)
      },
    )
    await ready(db, masterKey, () => {
      throw new ConfigError(
        'JACKDAW_ENCRYPTION_KEY is not the key the database at DATABASE_URL was written with: ' +
          'start every process of the service with the key it was first started with',
      )
    })
    return { db, vault: new Vault(masterKey) }
  }
  const server = await startEmbedded(config.JACKDAW_DATA_DIR, { shared: opts.shared, onLost: opts.onServerLost })
  let db: Db | undefined
  try {
    const masterKey = config.JACKDAW_ENCRYPTION_KEY
      ? parseMasterKey(config.JACKDAW_ENCRYPTION_KEY)
      : loadOrCreateKeyFile(config.JACKDAW_DATA_DIR)
    db = await openPostgres({ url: server.url, poolSize: config.DATABASE_POOL_SIZE })
    const pools = db
    const withServer: Db = {
      ...pools,
      async close() {
        await pools.close()
        await server.stop()
      },
    }
    const dir = path.resolve(config.JACKDAW_DATA_DIR)
    const keyFile = path.join(dir, 'encryption.key')
    await ready(pools, masterKey, () => {
      if (!config.JACKDAW_ENCRYPTION_KEY) {
        throw new ConfigError(
          `the key in ${keyFile} is not the key the store in ${dir} was written with: put that key back there, or set JACKDAW_ENCRYPTION_KEY to it`,
        )
      }
      throw new ConfigError(
        `JACKDAW_ENCRYPTION_KEY is not the key the store in ${dir} was written with: set it to that key` +
          (existsSync(keyFile) ? `, or leave it unset to use the one in ${keyFile}` : ''),
      )
    })
    return { db: withServer, vault: new Vault(masterKey), embedded: server }
  } catch (err) {
    await db?.close().catch(() => {})
    await server.stop().catch(() => {})
    throw err
  }
}

/** Migrates the store and checks its key; the connections are closed when either fails. */
async function ready(db: Db, masterKey: Buffer, wrongKey: () => never): Promise<void> {
  try {
    await migrate(db)
    if (!(await keyMatches(db, masterKey))) wrongKey()
  } catch (err) {
    await db.close().catch(() => {})
    throw err
  }
}

const KEY_CHECK_TEXT = 'jackdaw encryption key check'

/**
 * Whether `masterKey` is the key the store was written with: the first process to open a store
 * records the key's HMAC of a fixed text, which tells nothing of the key, and every later one
 * compares its own.
 */
async function keyMatches(db: Db, masterKey: Buffer): Promise<boolean> {
  const digest = createHmac('sha256', masterKey).update(KEY_CHECK_TEXT).digest('hex')
  await db.query('INSERT INTO encryption_key_check (digest) VALUES ($1) ON CONFLICT (id) DO NOTHING', [digest])
  const { rows } = await db.query<{ digest: string }>('SELECT digest FROM encryption_key_check')
  return timingSafeEqualText(rows[0]?.digest ?? '', digest)
}
