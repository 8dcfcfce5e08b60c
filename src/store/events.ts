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

const INSERT_EVENT = `INSERT INTO events (id, account_id, livemode, type, charge_id, data) VALUES ($1, $2, $3, $4, $5, $6::json)
   RETURNING ${COLUMNS}`

export async function insertEvent(
  db: Queryable,
  scope: Scope,
  e: { id: string; type: string; chargeId: string | null; data: object },
): Promise<EventRow> {
  const res = await db.query<EventRow>(INSERT_EVENT, [
    e.id,
    scope.accountId,
    scope.livemode,
    e.type,
    e.chargeId,
    JSON.stringify(e.data),
  ])
  return res.rows[0] as EventRow
}

const EVENT_BY_ID = `SELECT ${COLUMNS} FROM events WHERE id = $1 AND account_id = $2 AND livemode = $3`

export async function getEvent(db: Queryable, scope: Scope, id: string): Promise<EventRow | undefined> {
  const res = await db.query<EventRow>(EVENT_BY_ID, [id, scope.accountId, scope.livemode])
  return res.rows[0]
}

/** A page of events, newest first; with `chargeId`, only that charge's. */
export function listEvents(
  db: Queryable,
  scope: Scope,
  page: PageRequest,
  chargeId?: string | undefined,
): Promise<Page<EventRow>> {
  const filter = chargeId === undefined ? undefined : { where: (p: string) => `charge_id = ${p}`, value: chargeId }
  return listPage<EventRow>(db, 'events', COLUMNS, scope, page, filter)
}

const EVENTS_AFTER = `SELECT ${COLUMNS} FROM events WHERE account_id = $1 AND livemode = $2 AND ($3::text IS NULL OR id > $3)
   ORDER BY id LIMIT $4`

/**
 * Up to `limit` events of a scope whose ids come after `afterId` (all of them when null), oldest
 * first: what an event stream sends next.
 */
export async function eventsAfter(
  db: Queryable,
  scope: Scope,
  afterId: string | null,
  limit: number,
): Promise<EventRow[]> {
  const res = await db.query<EventRow>(EVENTS_AFTER, [scope.accountId, scope.livemode, afterId, limit])
  return res.rows
}

/** The id of a scope's newest event, or null when it has none. */
export async function newestEventId(db: Queryable, scope: Scope): Promise<string | null> {
  const res = await db.query<{ id: string }>(
    'SELECT id FROM events WHERE account_id = $1 AND livemode = $2 ORDER BY id DESC LIMIT 1',
    [scope.accountId, scope.livemode],
  )
  return res.rows[0]?.id ?? null
}
