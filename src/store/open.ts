import type { Config } from '../config.js'
import { ConfigError } from '../config.js'
import { loadOrCreateKeyFile, parseMasterKey, Vault } from '../crypto/vault.js'
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
 * migrated. Closing the store's `db` stops an embedded server this process started.
 */
export async function openStore(config: Config, opts: OpenOptions = {}): Promise<Store> {
  if (config.DATABASE_URL) {
    if (!config.JACKDAW_ENCRYPTION_KEY) {
      throw new ConfigError(
        'JACKDAW_ENCRYPTION_KEY is required with DATABASE_URL (the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)',
      )
    }
    const vault = new Vault(parseMasterKey(config.JACKDAW_ENCRYPTION_KEY))
    const db = await openPostgres({ url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })
    return { db: await migrated(db), vault }
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
    return { db: await migrated(withServer), vault: new Vault(masterKey), embedded: server }
  } catch (err) {
    await db?.close().catch(() => {})
    await server.stop().catch(() => {})
    throw err
  }
}

async function migrated(db: Db): Promise<Db> {
  try {
    await migrate(db)
    return db
  } catch (err) {
    await db.close()
    throw err
  }
}
