import type { Queryable } from './db.js'
import type { Scope } from './scope.js'

export interface PageRequest {
  startAfter?: string | undefined
  limit: number
}

export interface Page<R> {
  rows: R[]
  hasMore: boolean
}

/** The listable tables, each with its columns; names never come from a request. */
export type ListTable = 'charges' | 'customers' | 'events' | 'deliveries'

export class CursorNotFound extends Error {}

/**
 * The WHERE clause and parameters of one page of a table, newest first by id: $1 account, $2
 * mode, $3 the limit plus one (one more row than asked tells whether there are more), $4 the
 * cursor. Refuses a cursor that is not a row of this table in this scope.
 */
export async function pageWhere(
  db: Queryable,
  table: ListTable,
  scope: Scope,
  page: PageRequest,
  filter?: ListFilter,
): Promise<{ where: string; params: unknown[] }> {
  const params: unknown[] = [scope.accountId, scope.livemode, page.limit + 1]
  const filtered = (where: string) => {
    if (!filter) return { where, params }
    params.push(filter.value)
    return { where: `${where} AND ${filter.where(`$${params.length}`)}`, params }
  }
  if (page.startAfter === undefined) return filtered('account_id = $1 AND livemode = $2')
  const cursor = await db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND account_id = $2 AND livemode = $3`, [
    page.startAfter,
    scope.accountId,
    scope.livemode,
  ])
  if (cursor.rows.length === 0) throw new CursorNotFound()
  params.push(page.startAfter)
  return filtered('account_id = $1 AND livemode = $2 AND id < $4')
}

/** A page out of up to limit + 1 rows. */
export function toPage<R>(rows: R[], limit: number): Page<R> {
  const hasMore = rows.length > limit
  return { rows: hasMore ? rows.slice(0, limit) : rows, hasMore }
}

/**
 * One more condition of a list, on one value: `where` writes it given that value's parameter
 * (`$5`). Its text comes from code, never from a request.
 */
export interface ListFilter {
  where: (param: string) => string
  value: unknown
}

/**
 * Newest first by id (ids begin with their creation time), keyset-paged: a page holds the rows
 * whose id is below the cursor, so rows inserted while a client pages never shift a later page.
 * A cursor need not match `filter`: it is any object of the list.
 */
export async function listPage<R>(
  db: Queryable,
  table: ListTable,
  columns: string,
  scope: Scope,
  page: PageRequest,
  filter?: ListFilter,
): Promise<Page<R>> {
  const { where, params } = await pageWhere(db, table, scope, page, filter)
  const res = await db.query<R>(`SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY id DESC LIMIT $3`, params)
  return toPage(res.rows, page.limit)
}
