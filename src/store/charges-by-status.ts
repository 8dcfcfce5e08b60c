import { type ChargeVersion, versionOf } from './charges.js'
import type { Queryable } from './db.js'
import { listPage, type Page, type PageRequest } from './list.js'
import type { Scope } from './scope.js'

/**
 * A page of the charges in one status, newest first, as their ids and versions. It walks the
 * account's charges newest first and keeps those in the status: a status changes with most
 * writes of a charge, and an index on it would cost each of them more than this costs a list.
 */
export async function listChargeVersionsByStatus(
  db: Queryable,
  scope: Scope,
  status: string,
  page: PageRequest,
): Promise<Page<ChargeVersion>> {
  const found = await listPage<{ id: string; cv: unknown; sv: unknown }>(
    db,
    'charges',
    'id, xmin AS cv, (SELECT s.xmin FROM sources s WHERE s.id = charges.source_id) AS sv',
    scope,
    page,
    { where: (p) => `status = ${p}`, value: status },
  )
  return { rows: found.rows.map((r) => ({ id: r.id, version: versionOf(r.cv, r.sv) })), hasMore: found.hasMore }
}
