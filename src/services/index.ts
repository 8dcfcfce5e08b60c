import type { Vault } from '../crypto/vault.js'
import type { Db } from '../store/db.js'
import { accountService } from './accounts.js'
import { customerService } from './customers.js'
import { checkNotifyAddress } from './notify-address.js'
import { sourceService } from './sources.js'

export interface ServiceOptions {
  /** the address payers reach this service at, for hosted pages */
  publicUrl?: string
}

/** The one place where use cases get their dependencies. */
export function buildServices(deps: { db: Db; vault: Vault; options: ServiceOptions }) {
  const { db, vault } = deps
  return {
    accounts: accountService({ db, vault }),
    sources: sourceService({ db, vault, checkNotifyAddress }),
    customers: customerService({ db }),
  }
}

export type Services = ReturnType<typeof buildServices>
