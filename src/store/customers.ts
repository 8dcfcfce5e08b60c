import { sharedStatement } from './batch.js'
import type { Queryable } from './db.js'
import { columnNames, pick, selectPrefixed } from './joined.js'
import { listPage, type Page, type PageRequest } from './list.js'
import type { Scope } from './scope.js'
import { SOURCE_COLUMNS, type SourceRow } from './sources.js'

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
const JOINED = `${selectPrefixed('c', NAMES, '')}, ${selectPrefixed('s', SOURCE_COLUMNS, 's_')}`

export interface CustomerWithSources {
  customer: CustomerRow
  sources: SourceRow[]
}

function unjoin(rows: Record<string, unknown>[]): CustomerWithSources | undefined {
  const first = rows[0]
  if (!first) return undefined
  const customer = pick<CustomerRow>(first, NAMES) as CustomerRow
  const attached = rows.map((r) => pick<SourceRow>(r, SOURCE_COLUMNS, 's_')).filter((s) => s !== undefined)
  return { customer, sources: attached }
}

/** A customer's sources, each found by the index on customer_id (a lateral join cannot be hashed). */
const SOURCES_OF_C = `LEFT JOIN LATERAL (SELECT * FROM sources s WHERE s.customer_id = c.id) s ON true`

/** Joined rows of customers with their sources, each tagged `n`: the place of its call in a batch. */
function unjoinEach(rows: Record<string, unknown>[], count: number): (CustomerWithSources | undefined)[] {
  const groups: Record<string, unknown>[][] = Array.from({ length: count }, () => [])
  for (const r of rows) groups[Number(r.n) - 1]?.push(r)
  return groups.map(unjoin)
}

const CUSTOMERS_WITH_SOURCES = `SELECT r.n, ${JOINED}
   FROM unnest($1::text[], $2::text[], $3::boolean[]) WITH ORDINALITY AS r (id, account_id, livemode, n)
   JOIN customers c ON c.id = r.id AND c.account_id = r.account_id AND c.livemode = r.livemode
   ${SOURCES_OF_C}
   ORDER BY r.n, s.id`

/**
 * A customer and the sources attached to them, in one statement; concurrent calls share it
 * (store/batch.ts), each call a row of its arrays.
 */
const customersWithSources = sharedStatement(async (db, items: { scope: Scope; id: string }[]) => {
  const res = await db.query<Record<string, unknown>>(CUSTOMERS_WITH_SOURCES, [
    items.map((i) => i.id),
    items.map((i) => i.scope.accountId),
    items.map((i) => i.scope.livemode),
  ])
  return unjoinEach(res.rows, items.length)
})

export function getCustomerWithSources(
  db: Queryable,
  scope: Scope,
  id: string,
): Promise<CustomerWithSources | undefined> {
  return customersWithSources(db, { scope, id })
}

const INSERT_CUSTOMER = `INSERT INTO customers (id, account_id, livemode, email, description, mobile_number, metadata,
     idempotency_key)
   VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8) RETURNING ${COLUMNS}`

export interface NewCustomer {
  id: string
  email: string
  description: string
  mobile_number?: string | undefined
  metadata: object
  /** the request's Idempotency-Key, by which a retry finds what its first attempt made */
  idempotencyKey: string | null
}

export async function insertCustomer(db: Queryable, scope: Scope, c: NewCustomer): Promise<CustomerRow> {
  const res = await db.query<CustomerRow>(INSERT_CUSTOMER, [
    c.id,
    scope.accountId,
    scope.livemode,
    c.email,
    c.description,
    c.mobile_number ?? null,
    JSON.stringify(c.metadata),
    c.idempotencyKey,
  ])
  return res.rows[0] as CustomerRow
}

const CUSTOMER_BY_KEY = `SELECT ${COLUMNS} FROM customers WHERE account_id = $1 AND livemode = $2 AND idempotency_key = $3
   ORDER BY id DESC LIMIT 1`

/** The customer made by the request that carried this Idempotency-Key, if one was. */
export async function getCustomerByKey(db: Queryable, scope: Scope, key: string): Promise<CustomerRow | undefined> {
  const res = await db.query<CustomerRow>(CUSTOMER_BY_KEY, [scope.accountId, scope.livemode, key])
  return res.rows[0]
}

const CUSTOMER_BY_ID = `SELECT ${COLUMNS} FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3`

export async function getCustomer(db: Queryable, scope: Scope, id: string): Promise<CustomerRow | undefined> {
  const res = await db.query<CustomerRow>(CUSTOMER_BY_ID, [id, scope.accountId, scope.livemode])
  return res.rows[0]
}

/**
 * Locks the customer row for the rest of the transaction against another lock of it (an attach, a
 * delete), but not against a new charge's reference to it: a charge locks its source first and
 * then the customer its foreign key names, the reverse of a delete, which would deadlock the two.
 */
export async function lockCustomer(db: Queryable, scope: Scope, id: string): Promise<boolean> {
  const res = await db.query(
    'SELECT 1 FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3 FOR NO KEY UPDATE',
    [id, scope.accountId, scope.livemode],
  )
  return res.rows.length > 0
}

const CUSTOMER_BY_EMAIL = `SELECT ${COLUMNS} FROM customers WHERE account_id = $1 AND livemode = $2 AND lower(email) = lower($3)
   ORDER BY id DESC LIMIT 1`

export async function customerByEmail(db: Queryable, scope: Scope, email: string): Promise<CustomerRow | undefined> {
  const res = await db.query<CustomerRow>(CUSTOMER_BY_EMAIL, [scope.accountId, scope.livemode, email])
  return res.rows[0]
}

export function listCustomers(db: Queryable, scope: Scope, page: PageRequest): Promise<Page<CustomerRow>> {
  return listPage<CustomerRow>(db, 'customers', COLUMNS, scope, page)
}

export interface CustomerPatch {
  mobile_number?: string | undefined
  description?: string | undefined
  metadata?: object | undefined
}

interface CustomerUpdate {
  scope: Scope
  id: string
  patch: CustomerPatch
}

const UPDATE_CUSTOMERS = `WITH v AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::text[])
       WITH ORDINALITY AS v (id, account_id, livemode, mobile_number, description, metadata, n)
   ), c AS (
     UPDATE customers c SET
       mobile_number = COALESCE(v.mobile_number, c.mobile_number),
       description = COALESCE(v.description, c.description),
       metadata = COALESCE(v.metadata::json, c.metadata),
       updated_at = now()
     FROM v WHERE c.id = v.id AND c.account_id = v.account_id AND c.livemode = v.livemode
     RETURNING v.n, ${selectPrefixed('c', NAMES, '')}
   )
   SELECT c.n, ${JOINED} FROM c ${SOURCES_OF_C} ORDER BY c.n, s.id`

/** Updates of customers in one statement, never two of one customer (store/batch.ts). */
const updateCustomers = sharedStatement(
  async (db, items: CustomerUpdate[]) => {
    const res = await db.query<Record<string, unknown>>(UPDATE_CUSTOMERS, [
      items.map((i) => i.id),
      items.map((i) => i.scope.accountId),
      items.map((i) => i.scope.livemode),
      items.map((i) => i.patch.mobile_number ?? null),
      items.map((i) => i.patch.description ?? null),
      items.map((i) => (i.patch.metadata === undefined ? null : JSON.stringify(i.patch.metadata))),
    ])
    return unjoinEach(res.rows, items.length)
  },
  { key: (i) => i.id },
)

/**
 * Updates a customer: absent fields keep their value; metadata, when given, replaces the whole
 * object. Answers the customer as updated, with its sources; undefined for an id that names no
 * customer of the scope.
 */
export function updateCustomer(
  db: Queryable,
  scope: Scope,
  id: string,
  patch: CustomerPatch,
): Promise<CustomerWithSources | undefined> {
  return updateCustomers(db, { scope, id, patch })
}

export async function deleteCustomer(db: Queryable, scope: Scope, id: string): Promise<boolean> {
  const res = await db.query('DELETE FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3 RETURNING id', [
    id,
    scope.accountId,
    scope.livemode,
  ])
  return res.rows.length > 0
}
