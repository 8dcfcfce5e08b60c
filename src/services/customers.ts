import { holdsCardNumber } from '../domain/card.js'
import { AppError, invalidParams, notFound, type Violation } from '../errors.js'
import type { CreateCustomerInput, CustomerView, UpdateCustomerInput } from '../schemas/customer.js'
import * as customers from '../store/customers.js'
import type { Db, Queryable } from '../store/db.js'
import { makeId } from '../store/ids.js'
import type { Page, PageRequest } from '../store/list.js'
import type { Scope } from '../store/scope.js'
import * as sources from '../store/sources.js'
import { whyNotConsumed } from './sources.js'
import { customerView } from './views.js'

/**
 * The rules of a new customer's body that its schema cannot state: its email holds no card number,
 * which would otherwise be kept and shown in clear. It reads the body as it came, so that a refused
 * body's answer names this problem as well as the schema's. `param` names the field as the request
 * does.
 */
export function customerBodyViolations(body: unknown, param = 'email'): Violation[] {
  const email = typeof body === 'object' && body !== null ? (body as { email?: unknown }).email : undefined
  return typeof email === 'string' && holdsCardNumber(email)
    ? [{ code: 'parameter_invalid', param, msg: `${param} must not hold a card number` }]
    : []
}

export function customerService(deps: { db: Db }) {
  const { db } = deps

  async function withSources(q: Queryable, rows: customers.CustomerRow[]): Promise<CustomerView[]> {
    const attached = await sources.sourcesOfCustomers(
      q,
      rows.map((r) => r.id),
    )
    return rows.map((r) =>
      customerView(
        r,
        attached.filter((s) => s.customer_id === r.id),
      ),
    )
  }

  async function one(q: Queryable, row: customers.CustomerRow | undefined, id: string): Promise<CustomerView> {
    if (!row) throw notFound('customer', id)
    return (await withSources(q, [row]))[0] as CustomerView
  }

  async function create(scope: Scope, input: CreateCustomerInput, idempotencyKey?: string): Promise<CustomerView> {
    // a retry of a request whose answer was lost after the customer was stored
    if (idempotencyKey) {
      const earlier = await customers.getCustomerByKey(db, scope, idempotencyKey)
      if (earlier) return one(db, earlier, earlier.id)
    }
    const [violation, ...more] = customerBodyViolations(input)
    if (violation) throw invalidParams([violation, ...more])
    const row = await customers.insertCustomer(db, scope, {
      id: await makeId(db, scope, 'customer'),
      email: input.email,
      description: input.description,
      mobile_number: input.mobile_number,
      metadata: input.metadata ?? {},
      idempotencyKey: idempotencyKey ?? null,
    })
    return customerView(row, [])
  }

  async function get(scope: Scope, id: string): Promise<CustomerView> {
    const found = await customers.getCustomerWithSources(db, scope, id)
    if (!found) throw notFound('customer', id)
    return customerView(found.customer, found.sources)
  }

  async function byEmail(scope: Scope, email: string): Promise<CustomerView> {
    const row = await customers.customerByEmail(db, scope, email)
    if (!row) throw new AppError('resource_missing', 'No customer has that email', { param: 'email' })
    return one(db, row, row.id)
  }

  async function list(scope: Scope, page: PageRequest): Promise<Page<CustomerView>> {
    const found = await customers.listCustomers(db, scope, page)
    return { rows: await withSources(db, found.rows), hasMore: found.hasMore }
  }

  async function update(scope: Scope, id: string, input: UpdateCustomerInput): Promise<CustomerView> {
    const updated = await customers.updateCustomer(db, scope, id, input)
    if (!updated) throw notFound('customer', id)
    return customerView(updated.customer, updated.sources)
  }

  async function remove(scope: Scope, id: string) {
    const deleted = await db.transaction(async (tx) => {
      if (!(await customers.lockCustomer(tx, scope, id))) return false
      await sources.detachAllSources(tx, id)
      return customers.deleteCustomer(tx, scope, id)
    })
    if (!deleted) throw notFound('customer', id)
    return { id, object: 'customer' as const, deleted: true as const }
  }

  /**
   * Attaching consumes the source: of any number of concurrent attaches, one succeeds. A retry of
   * that one (its Idempotency-Key) is answered as it would have been.
   */
  async function attach(scope: Scope, id: string, sourceId: string, idempotencyKey?: string): Promise<CustomerView> {
    const outcome = await db.transaction(async (tx) => {
      if (!(await customers.lockCustomer(tx, scope, id))) return 'no_customer' as const
      const consumed = await sources.consumeSource(tx, scope, sourceId, id, idempotencyKey)
      return consumed ? ('attached' as const) : ('not_consumed' as const)
    })
    if (outcome === 'no_customer') throw notFound('customer', id)
    if (outcome === 'not_consumed') {
      const found = await sources.sourceConsumption(db, scope, sourceId)
      const retried = idempotencyKey !== undefined && found?.attachKey === idempotencyKey
      if (!retried || found?.source.customer_id !== id) throw whyNotConsumed(sourceId, found)
    }
    return get(scope, id)
  }

  async function detach(scope: Scope, id: string, sourceId: string): Promise<CustomerView> {
    const customer = await customers.getCustomer(db, scope, id)
    if (!customer) throw notFound('customer', id)
    const detached = await sources.detachSource(db, scope, id, sourceId)
    if (!detached) {
      const exists = await sources.getSource(db, scope, sourceId)
      if (!exists) throw notFound('source', sourceId)
      throw new AppError('source_not_attached', `The source ${sourceId} is not attached to ${id}`, {
        param: 'source',
      })
    }
    return one(db, customer, id)
  }

  return { create, get, byEmail, list, update, remove, attach, detach }
}

export type CustomerService = ReturnType<typeof customerService>
