import type { CustomerView } from '../schemas/customer.js'
import type { SourceView } from '../schemas/source.js'
import type { CustomerRow } from '../store/customers.js'
import type { SourceRow } from '../store/sources.js'

/** Stored rows as the API shows them; a null column is an absent field. */
export function sourceView(row: SourceRow): SourceView {
  return {
    object: 'source',
    id: row.id,
    type: row.type as SourceView['type'],
    ...(row.card ? { card: row.card as SourceView['card'] } : {}),
    ...(row.bank_account ? { bank_account: row.bank_account as SourceView['bank_account'] } : {}),
    ...(row.redirect ? { redirect: row.redirect as SourceView['redirect'] } : {}),
    ...(row.owner ? { owner: row.owner as SourceView['owner'] } : {}),
    vaulted: row.vaulted,
    used: row.used,
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: (row.metadata ?? {}) as SourceView['metadata'],
  }
}

export function customerView(row: CustomerRow, sources: SourceRow[]): CustomerView {
  return {
    object: 'customer',
    id: row.id,
    email: row.email,
    ...(row.mobile_number !== null ? { mobile_number: row.mobile_number } : {}),
    ...(row.description !== null ? { description: row.description } : {}),
    sources: sources.map(sourceView),
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: row.metadata as CustomerView['metadata'],
  }
}
