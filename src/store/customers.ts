import type { Queryable } from './db.js'
import { columnNames, pick, selectPrefixed } from './joined.js'
import { listPage, type Page, type PageRequest } from './list.js'
import { ParamRows } from './param-rows.js'
import type { Scope } from './scope.js'
import { SOURCE_NAMES, type SourceRow } from './sources.js'

export interface CustomerRow {
  id: string
  livemode: boolean
  email: string
  mobile_number: string | null
  description: string | null
  metadata: Record<string, unknown>
  created_at: string
  updated_at: string
}

const COLUMNS = 'id, livemode, email, mobile_number, description, metadata, created_at, updated_at'

// A customer joined with its sources: one row per source (or one with no source), the source's
// columns under an `s_` prefix.
const NAMES = columnNames(COLUMNS)
const JOINED = `${selectPrefixed('c', NAMES, '')}, ${selectPrefixed('s', SOURCE_NAMES, 's_')}`

export interface CustomerWithSources {
  customer: CustomerRow
  sources: SourceRow[]
}

function unjoin(rows: Record<string, unknown>[]): CustomerWithSources | undefined {
  const first = rows[0]
  if (!first) return undefined
  const customer = pick<CustomerRow>(first, NAMES) as CustomerRow
  const attached = rows.map((r) => pick<SourceRow>(r, SOURCE_NAMES, 's_')).filter((s) => s !== undefined)
  return { customer, sources: attached }
}

/** A customer's sources, each found by the index on customer_id (a lateral join cannot be hashed). */
const SOURCES_OF_C = `LEFT JOIN LATERAL (SELECT * FROM sources s WHERE s.customer_id = c.id) s ON true`

/** Rows of customers joined with their sources, for each of `items` in order, by id and scope. */
function unjoinEach(
  rows: Record<string, unknown>[],
  items: readonly { scope: Scope; id: string }[],
): (CustomerWithSources | undefined)[] {
  const byId = new Map<string, Record<string, unknown>[]>()
  for (const r of rows) {
    const id = r.id as string
    const group = byId.get(id)
    if (group) group.push(r)
    else byId.set(id, [r])
  }
  return items.map(({ scope, id }) => {
    const group = byId.get(id)
    const first = group?.[0]
    if (!group || !first || first.account_id !== scope.accountId || first.livemode !== scope.livemode) return undefined
    return unjoin(group)
  })
}

/**
 * Customers and the sources attached to them, for a batch of retrieves (store/batch.ts), in one
 * statement; undefined for an id that names no customer of its caller's scope.
 */
export async function getCustomersWithSources(
  db: Queryable,
  items: readonly { scope: Scope; id: string }[],
): Promise<(CustomerWithSources | undefined)[]> {
  const res = await db.query<Record<string, unknown>>(
    `SELECT c.account_id, ${JOINED} FROM customers c ${SOURCES_OF_C}
     WHERE c.id = ANY($1::text[]) ORDER BY c.id, s.id`,
    [items.map((i) => i.id)],
    { batch: true },
  )
  return unjoinEach(res.rows, items)
}

export async function insertCustomer(
  db: Queryable,
  scope: Scope,
  c: { id: string; email: string; description: string; mobile_number?: string | undefined; metadata: object },
): Promise<CustomerRow> {
  const res = await db.query<CustomerRow>(
    `INSERT INTO customers (id, account_id, livemode, email, description, mobile_number, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7::json) RETURNING ${COLUMNS}`,
    [
      c.id,
      scope.accountId,
      scope.livemode,
      c.email,
      c.description,
      c.mobile_number ?? null,
      JSON.stringify(c.metadata),
    ],
  )
  return res.rows[0] as CustomerRow
}

export async function getCustomer(db: Queryable, scope: Scope, id: string): Promise<CustomerRow | undefined> {
  const res = await db.query<CustomerRow>(
    `SELECT ${COLUMNS} FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3`,
    [id, scope.accountId, scope.livemode],
  )
  return res.rows[0]
}

/** Locks the customer row for the rest of the transaction. */
export async function lockCustomer(db: Queryable, scope: Scope, id: string): Promise<boolean> {
  const res = await db.query('SELECT 1 FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3 FOR UPDATE', [
    id,
    scope.accountId,
    scope.livemode,
  ])
  return res.rows.length > 0
}

export async function customerByEmail(db: Queryable, scope: Scope, email: string): Promise<CustomerRow | undefined> {
  const res = await db.query<CustomerRow>(
    `SELECT ${COLUMNS} FROM customers WHERE account_id = $1 AND livemode = $2 AND lower(email) = lower($3)
     ORDER BY id DESC LIMIT 1`,
    [scope.accountId, scope.livemode, email],
  )
  return res.rows[0]
}

export function listCustomers(db: Queryable, scope: Scope, page: PageRequest): Promise<Page<CustomerRow>> {
  return listPage<CustomerRow>(db, 'customers', COLUMNS, scope, page)
}

export interface CustomerUpdate {
  scope: Scope
  id: string
  patch: { mobile_number?: string | undefined; description?: string | undefined; metadata?: object | undefined }
}

const CUSTOMER_UPDATES = new ParamRows<{
  id: string
  account_id: string
  livemode: boolean
  mobile_number: string | null
  description: string | null
  metadata: object | null
}>([
  ['id', 'text'],
  ['account_id', 'text'],
  ['livemode', 'boolean'],
  ['mobile_number', 'text'],
  ['description', 'text'],
  ['metadata', 'json'],
])

/**
 * Updates of customers, for a batch (store/batch.ts, never two of one customer), in one statement:
 * absent fields keep their value; metadata, when given, replaces the whole object. Answers each
 * customer as updated, with its sources; undefined for an id that names no customer of its scope.
 */
export async function updateCustomers(
  db: Queryable,
  items: readonly CustomerUpdate[],
): Promise<(CustomerWithSources | undefined)[]> {
  const rows = items.map(({ scope, id, patch }) => ({
    id,
    account_id: scope.accountId,
    livemode: scope.livemode,
    mobile_number: patch.mobile_number ?? null,
    description: patch.description ?? null,
    metadata: patch.metadata ?? null,
  }))
  const sql = CUSTOMER_UPDATES.statement(
    rows.length,
    (batch) => `WITH v AS ${batch}, c AS (
       UPDATE customers c SET
         mobile_number = COALESCE(v.mobile_number, c.mobile_number),
         description = COALESCE(v.description, c.description),
         metadata = COALESCE(v.metadata, c.metadata),
         updated_at = now()
       FROM v WHERE c.id = v.id AND c.account_id = v.account_id AND c.livemode = v.livemode
       RETURNING c.account_id, ${selectPrefixed('c', NAMES, '')}
     )
     SELECT c.account_id, ${JOINED} FROM c ${SOURCES_OF_C} ORDER BY c.id, s.id`,
  )
  const res = await db.query<Record<string, unknown>>(sql, CUSTOMER_UPDATES.values(rows), { batch: true })
  return unjoinEach(res.rows, items)
}

export async function deleteCustomer(db: Queryable, scope: Scope, id: string): Promise<boolean> {
  const res = await db.query('DELETE FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3 RETURNING id', [
    id,
    scope.accountId,
    scope.livemode,
  ])
  return res.rows.length > 0
}
