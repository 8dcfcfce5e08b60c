import type { CustomerView } from '../schemas/customer.js'
import type { ChargeSourceView, SourceView } from '../schemas/source.js'
import type { CustomerRow } from '../store/customers.js'
import type { SourceRow } from '../store/sources.js'

/**
 * Stored rows as the API shows them; a null column is an absent field. A view writes every field
 * it can have, always in one order, an absent one as undefined, which neither the response
 * serializer nor JSON writes out: views built so share one shape, which the serializer reads far
 * faster than objects that spread their optional fields in.
 */
export function sourceView(row: SourceRow): SourceView {
  return chargeSourceView(row, undefined, undefined)
}

/** A source as a charge shows it: the source's fields, then the charge's own. */
export function chargeSourceView(
  row: SourceRow,
  requireAuth: boolean | undefined,
  action: ChargeSourceView['action'],
): ChargeSourceView {
  return {
    object: 'source',
    id: row.id,
    type: row.type as SourceView['type'],
    card: (row.card ?? undefined) as SourceView['card'],
    bank_account: (row.bank_account ?? undefined) as SourceView['bank_account'],
    redirect: (row.redirect ?? undefined) as SourceView['redirect'],
    owner: (row.owner ?? undefined) as SourceView['owner'],
    vaulted: row.vaulted,
    used: row.used,
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: (row.metadata ?? {}) as SourceView['metadata'],
    require_auth: requireAuth,
    action,
  }
}

export function customerView(row: CustomerRow, sources: SourceRow[]): CustomerView {
  return {
    object: 'customer',
    id: row.id,
    email: row.email,
    mobile_number: row.mobile_number ?? undefined,
    description: row.description ?? undefined,
    sources: sources.map(sourceView),
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: row.metadata as CustomerView['metadata'],
  }
}
