import type { Queryable } from './db.js'
import { listPage, type Page, type PageRequest } from './list.js'
import type { Scope } from './scope.js'

export interface EventRow {
  id: string
  livemode: boolean
  type: string
  charge_id: string | null
  data: Record<string, unknown>
  created_at: string
}

const COLUMNS = 'id, livemode, type, charge_id, data, created_at'

export async function insertEvent(
  db: Queryable,
  scope: Scope,
  e: { id: string; type: string; chargeId: string | null; data: object },
): Promise<EventRow> {
  const res = await db.query<EventRow>(
    `INSERT INTO events (id, account_id, livemode, type, charge_id, data) VALUES ($1, $2, $3, $4, $5, $6::json)
     RETURNING ${COLUMNS}`,
    [e.id, scope.accountId, scope.livemode, e.type, e.chargeId, JSON.stringify(e.data)],
  )
  return res.rows[0] as EventRow
}

export async function getEvent(db: Queryable, scope: Scope, id: string): Promise<EventRow | undefined> {
  const res = await db.query<EventRow>(
    `SELECT ${COLUMNS} FROM events WHERE id = $1 AND account_id = $2 AND livemode = $3`,
    [id, scope.accountId, scope.livemode],
  )
  return res.rows[0]
}

export function listEvents(db: Queryable, scope: Scope, page: PageRequest): Promise<Page<EventRow>> {
  return listPage<EventRow>(db, 'events', COLUMNS, scope, page)
}
