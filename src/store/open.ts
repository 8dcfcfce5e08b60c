import type { Config } from '../config.js'
import { ConfigError } from '../config.js'
import { loadOrCreateKeyFile, parseMasterKey, Vault } from '../crypto/vault.js'
import { type Db, openPglite, openPostgres } from './db.js'
import { migrate } from './migrate.js'

export interface Store {
  db: Db
  vault: Vault
}

/** PostgreSQL when DATABASE_URL is set, else the embedded store in the data directory; migrated. */
export async function openStore(config: Config): Promise<Store> {
  let masterKey: Buffer
  if (config.JACKDAW_ENCRYPTION_KEY) masterKey = parseMasterKey(config.JACKDAW_ENCRYPTION_KEY)
  else if (config.DATABASE_URL) {
    throw new ConfigError(
      'JACKDAW_ENCRYPTION_KEY is required with DATABASE_URL (the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)',
    )
  } else masterKey = loadOrCreateKeyFile(config.JACKDAW_DATA_DIR)
  const db = config.DATABASE_URL
    ? await openPostgres({ url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })
    : await openPglite({ dataDir: config.JACKDAW_DATA_DIR })
  try {
    await migrate(db)
  } catch (err) {
    await db.close()
    throw err
  }
  return { db, vault: new Vault(masterKey) }
}
