import { notFound } from '../../errors.js'
import type { ChargeView, RefundView } from '../../schemas/charge.js'
import { detailsOf, getChargeWithDetails, listChargesWithDetails } from '../../store/charge-views.js'
import type { ChargeRow } from '../../store/charges.js'
import type { Db, Queryable } from '../../store/db.js'
import type { Page, PageRequest } from '../../store/list.js'
import type { RefundRow } from '../../store/refunds.js'
import type { Scope } from '../../store/scope.js'
import type { SourceRow } from '../../store/sources.js'
import { chargeSourceView } from '../views.js'
import type { StoredAction } from './context.js'

export function refundView(r: RefundRow): RefundView {
  return {
    object: 'refund',
    id: r.id,
    amount: r.amount,
    currency: r.currency,
    reason: r.reason,
    status: r.status,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}

/** A charge as the API shows it: its source with the charge's step for the payer, and its refunds. */
export function chargeView(c: ChargeRow, source: SourceRow, refunds: RefundRow[]): ChargeView {
  const action = c.action as StoredAction | null
  return {
    object: 'charge',
    id: c.id,
    amount: c.amount,
    amount_refunded: c.amount_refunded,
    authorized: c.authorized,
    captured: c.captured,
    currency: c.currency,
    statement_descriptor: c.statement_descriptor,
    description: c.description,
    source: chargeSourceView(
      source,
      c.require_auth,
      action
        ? { type: action.type, url: action.url || undefined, confirmation_id: action.confirmation_id || undefined }
        : undefined,
    ),
    refunds: refunds.map(refundView),
    status: c.status,
    livemode: c.livemode,
    created_at: c.created_at,
    updated_at: c.updated_at,
    metadata: c.metadata as ChargeView['metadata'],
    failure_data: (c.failure_data ?? undefined) as ChargeView['failure_data'],
  }
}

/** The view of a charge as stored now, its source and refunds read with `q`. */
export async function loadView(q: Queryable, row: ChargeRow): Promise<ChargeView> {
  const { source, refunds } = await detailsOf(q, row)
  return chargeView(row, source, refunds)
}

/** The view of the caller's charge `id` as stored now. */
export async function currentView(q: Queryable, scope: Scope, id: string): Promise<ChargeView> {
  const found = await getChargeWithDetails(q, scope, id)
  if (!found) throw notFound('charge', id)
  return chargeView(found.charge, found.source, found.refunds)
}

export function chargeViews(db: Db) {
  const get = (scope: Scope, id: string): Promise<ChargeView> => currentView(db, scope, id)

  async function list(scope: Scope, page: PageRequest, status?: string): Promise<Page<ChargeView>> {
    const found = await listChargesWithDetails(db, scope, page, status)
    return { rows: found.rows.map((d) => chargeView(d.charge, d.source, d.refunds)), hasMore: found.hasMore }
  }

  return { get, list }
}
