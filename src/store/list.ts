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
 * Newest first by id (ids begin with their creation time), keyset-paged: a page holds the rows
 * whose id is below the cursor, so rows inserted while a client pages never shift a later page.
 */
export async function listPage<R>(
  db: Queryable,
  table: ListTable,
  columns: string,
  scope: Scope,
  page: PageRequest,
): Promise<Page<R>> {
  const params: unknown[] = [scope.accountId, scope.livemode, page.limit + 1]
  let cursorClause = ''
  if (page.startAfter !== undefined) {
    const cursor = await db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND account_id = $2 AND livemode = $3`, [
      page.startAfter,
      scope.accountId,
      scope.livemode,
    ])
    if (cursor.rows.length === 0) throw new CursorNotFound()
    params.push(page.startAfter)
    cursorClause = 'AND id < $4'
  }
  const res = await db.query<R>(
    `SELECT ${columns} FROM ${table}
     WHERE account_id = $1 AND livemode = $2 ${cursorClause}
     ORDER BY id DESC LIMIT $3`,
    params,
  )
  const hasMore = res.rows.length > page.limit
  return { rows: hasMore ? res.rows.slice(0, page.limit) : res.rows, hasMore }
}
