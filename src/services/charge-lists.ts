import { listChargeVersionsByStatus } from '../store/charges-by-status.js'
import type { Db } from '../store/db.js'
import type { PageRequest } from '../store/list.js'
import type { Scope } from '../store/scope.js'

/** Lists of charges narrowed by a filter; the unfiltered list is the charge service's. */
export function chargeListService(deps: { db: Db }) {
  return {
    /** A page of the charges in one status, as ids and versions for the list's renderer. */
    byStatus: (scope: Scope, status: string, page: PageRequest) =>
      listChargeVersionsByStatus(deps.db, scope, status, page),
  }
}
