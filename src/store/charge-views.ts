import { CHARGE_COLUMNS, type ChargeRow } from './charges.js'
import type { Queryable } from './db.js'
import { timestampsFromJson } from './joined.js'
import { type Page, type PageRequest, pageWhere, toPage } from './list.js'
import { REFUND_COLUMNS, type RefundRow } from './refunds.js'
import type { Scope } from './scope.js'
import { SOURCE_COLUMNS, type SourceRow } from './sources.js'

/** A charge with what its view shows: its source and its refunds, oldest first. */
export interface ChargeWithDetails {
  charge: ChargeRow
  source: SourceRow
  refunds: RefundRow[]
}

const columnsOf = (alias: string, names: readonly string[]) => names.map((n) => `${alias}.${n}`).join(', ')

/**
 * Each charge as one JSON value with its source and its refunds, so that a page is one statement
 * and one round trip whatever its size.
 */
const WITH_DETAILS = `SELECT ${columnsOf('c', CHARGE_COLUMNS)},
    (SELECT to_json(s) FROM (SELECT ${columnsOf('s', SOURCE_COLUMNS)} FROM sources s WHERE s.id = c.source_id) s)
      AS source,
    (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM (
       SELECT ${columnsOf('r', REFUND_COLUMNS)} FROM refunds r WHERE r.charge_id = c.id) r) AS refunds
  FROM charges c`

type JsonDetails = ChargeRow & { source: SourceRow; refunds: RefundRow[] }

function fromJson({ source, refunds, ...charge }: JsonDetails): ChargeWithDetails {
  return {
    charge: timestampsFromJson(charge, CHARGE_COLUMNS),
    source: timestampsFromJson(source, SOURCE_COLUMNS),
    refunds: refunds.map((r) => timestampsFromJson(r, REFUND_COLUMNS)),
  }
}

/** A page of the caller's charges, newest first, each with its source and refunds. */
export async function listChargesWithDetails(
  db: Queryable,
  scope: Scope,
  page: PageRequest,
): Promise<Page<ChargeWithDetails>> {
  const { where, params } = await pageWhere(db, 'charges', scope, page)
  const res = await db.query<{ page: JsonDetails[] }>(
    `SELECT coalesce(json_agg(x ORDER BY x.id DESC), '[]') AS page FROM (
       ${WITH_DETAILS} WHERE ${where} ORDER BY c.id DESC LIMIT $3
     ) x`,
    params,
  )
  return toPage((res.rows[0]?.page ?? []).map(fromJson), page.limit)
}

/** The source and refunds of a charge, in one statement. */
export async function detailsOf(db: Queryable, charge: ChargeRow): Promise<ChargeWithDetails> {
  const res = await db.query<{ source: SourceRow; refunds: RefundRow[] }>(
    `SELECT (SELECT to_json(s) FROM (SELECT ${SOURCE_COLUMNS.join(', ')} FROM sources WHERE id = $1) s) AS source,
       (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM (
          SELECT ${REFUND_COLUMNS.join(', ')} FROM refunds WHERE charge_id = $2) r) AS refunds`,
    [charge.source_id, charge.id],
  )
  const found = res.rows[0]
  if (!found?.source) throw new Error(`the source ${charge.source_id} of ${charge.id} is not stored`)
  return {
    charge,
    source: timestampsFromJson(found.source, SOURCE_COLUMNS),
    refunds: found.refunds.map((r) => timestampsFromJson(r, REFUND_COLUMNS)),
  }
}
