import { sharedStatement } from './batch.js'
import { CHARGE_COLUMNS, type ChargeRow } from './charges.js'
import type { Queryable } from './db.js'
import { timestampsFromJson } from './joined.js'
import { type ListFilter, type Page, type PageRequest, pageWhere, toPage } from './list.js'
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

interface PageAsked {
  scope: Scope
  page: PageRequest
  status: string | undefined
}

/** The statement of a page for each of the few WHERE clauses pageWhere writes, made once. */
const pageStatements = new Map<string, string>()

function pageStatement(where: string): string {
  let sql = pageStatements.get(where)
  if (sql === undefined) {
    sql = `SELECT coalesce(json_agg(x ORDER BY x.id DESC), '[]') AS page FROM (
       ${WITH_DETAILS} WHERE ${where} ORDER BY c.id DESC LIMIT $3
     ) x`
    pageStatements.set(where, sql)
  }
  return sql
}

async function readPage(db: Queryable, { scope, page, status }: PageAsked): Promise<Page<ChargeWithDetails>> {
  const filter: ListFilter | undefined = status ? { where: (p) => `c.status = ${p}`, value: status } : undefined
  const { where, params } = await pageWhere(db, 'charges', scope, page, filter)
  const res = await db.query<{ page: JsonDetails[] }>(pageStatement(where), params)
  return toPage((res.rows[0]?.page ?? []).map(fromJson), page.limit)
}

/**
 * Pages asked for at the same moment (store/batch.ts): the same page of the same account, mode and
 * status is read once for all who asked while the statement before was under way, each answered
 * with that reading, which began after they asked. A page is read as its objects are then, so one
 * reading serves them all as well as one each would.
 */
const pagesAsked = sharedStatement((db, items: PageAsked[]) => {
  const readings = new Map<string, Promise<Reading>>()
  return Promise.all(
    items.map((asked) => {
      const key = JSON.stringify([asked.scope.accountId, asked.scope.livemode, asked.page, asked.status ?? null])
      let reading = readings.get(key)
      if (!reading) {
        // a cursor that names no charge fails the callers who sent it only
        reading = readPage(db, asked).then(
          (page) => ({ page }),
          (error: unknown) => ({ error }),
        )
        readings.set(key, reading)
      }
      return reading
    }),
  )
})

type Reading = { page: Page<ChargeWithDetails> } | { error: unknown }

/**
 * A page of the caller's charges, newest first, each with its source and refunds; with `status`,
 * only those in it. The status filter walks the account's charges newest first: a status changes
 * with most writes of a charge, and an index on it would cost each of them more than it saves a list.
 * The rows may be shared with other callers of the moment: they are read, never changed.
 */
export async function listChargesWithDetails(
  db: Queryable,
  scope: Scope,
  page: PageRequest,
  status?: string,
): Promise<Page<ChargeWithDetails>> {
  const reading = await pagesAsked(db, { scope, page, status })
  if ('error' in reading) throw reading.error
  return { rows: [...reading.page.rows], hasMore: reading.page.hasMore }
}

const CHARGE_WITH_DETAILS = `${WITH_DETAILS} WHERE c.id = $1 AND c.account_id = $2 AND c.livemode = $3`

/**
 * The caller's charge with its source and refunds, read in one statement: as they stood at one
 * moment, so its amount_refunded always adds up its refunds, however many are being made.
 */
export async function getChargeWithDetails(
  db: Queryable,
  scope: Scope,
  id: string,
): Promise<ChargeWithDetails | undefined> {
  const res = await db.query<JsonDetails>(CHARGE_WITH_DETAILS, [id, scope.accountId, scope.livemode])
  const found = res.rows[0]
  return found && fromJson(found)
}

const DETAILS_OF = `SELECT (SELECT to_json(s) FROM (SELECT ${SOURCE_COLUMNS.join(', ')} FROM sources WHERE id = $1) s) AS source,
     (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM (
        SELECT ${REFUND_COLUMNS.join(', ')} FROM refunds WHERE charge_id = $2) r) AS refunds`

/** The source and refunds of a charge, in one statement. */
export async function detailsOf(db: Queryable, charge: ChargeRow): Promise<ChargeWithDetails> {
  const res = await db.query<{ source: SourceRow; refunds: RefundRow[] }>(DETAILS_OF, [charge.source_id, charge.id])
  const found = res.rows[0]
  if (!found?.source) throw new Error(`the source ${charge.source_id} of ${charge.id} is not stored`)
  return {
    charge,
    source: timestampsFromJson(found.source, SOURCE_COLUMNS),
    refunds: found.refunds.map((r) => timestampsFromJson(r, REFUND_COLUMNS)),
  }
}
