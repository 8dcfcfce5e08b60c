import { newId } from '../../domain/ids.js'
import { normalizeCurrency } from '../../domain/money.js'
import { AppError, invalidParams, type Violation } from '../../errors.js'
import type { ChargeView, CreateChargeInput } from '../../schemas/charge.js'
import { findAccount } from '../../store/accounts.js'
import { type ChargeRow, getChargeByKey, insertCharge, type NewCharge } from '../../store/charges.js'
import { getCustomer } from '../../store/customers.js'
import type { Queryable } from '../../store/db.js'
import type { Scope } from '../../store/scope.js'
import { consumeSource, getSourceWithCard, type SourceWithCard } from '../../store/sources.js'
import type { Authorizations } from './authorization.js'
import type { ChargeContext, HostedPageUrl } from './context.js'

/**
 * The rule of a charge's body that its schema cannot state: the currency is one ISO 4217 knows. It
 * reads the body as it came, so that a refused body's answer names this problem as well as the
 * schema's.
 */
export function chargeBodyViolations(body: unknown): Violation[] {
  const currency = typeof body === 'object' && body !== null ? (body as { currency?: unknown }).currency : undefined
  if (typeof currency !== 'string' || normalizeCurrency(currency)) return []
  return [{ code: 'parameter_invalid', param: 'currency', msg: 'currency is not an ISO 4217 code' }]
}

/** An account name as a statement descriptor: pattern P, 3 to 100 characters. */
export function descriptorFrom(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9\s'#_.\-,]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100)
  return cleaned.length >= 3 ? cleaned : 'JACKDAW'
}

/**
 * The source a new charge takes, read with its card data and locked for the rest of the
 * transaction: a detach, an attach or another charge of it waits until the charge is recorded. A
 * saved source is charged with its customer; a single-use one is consumed.
 */
async function takeSource(tx: Queryable, scope: Scope, input: CreateChargeInput): Promise<SourceWithCard> {
  const source = await getSourceWithCard(tx, scope, input.source, true)
  if (!source) throw new AppError('resource_missing', `No such source: '${input.source}'`, { param: 'source' })
  if (input.customer !== undefined) {
    if (!(await getCustomer(tx, scope, input.customer))) {
      throw new AppError('resource_missing', `No such customer: '${input.customer}'`, { param: 'customer' })
    }
    if (source.customer_id !== input.customer) {
      throw new AppError('customer_source_mismatch', `The source ${source.id} does not belong to ${input.customer}`, {
        param: 'customer',
      })
    }
  } else if (source.customer_id !== null) {
    throw new AppError(
      'customer_source_mismatch',
      `The source ${source.id} is saved to a customer; pass that customer to charge it`,
      { param: 'customer' },
    )
  }
  if (source.vaulted) return source
  const consumed = await consumeSource(tx, scope, source.id)
  if (!consumed) throw new AppError('source_used', `The source ${source.id} has already been used`, { param: 'source' })
  return { ...source, ...consumed }
}

export function chargeCreation(
  ctx: ChargeContext,
  auth: Authorizations,
  resume: (scope: Scope, charge: ChargeRow, url: HostedPageUrl) => Promise<ChargeView>,
) {
  const { db } = ctx

  /** Account names change seldom; a charge's default descriptor need not read one each time. */
  const descriptors = new Map<string, { text: string; until: number }>()
  async function defaultDescriptor(accountId: string): Promise<string> {
    const cached = descriptors.get(accountId)
    if (cached && cached.until > Date.now()) return cached.text
    const text = descriptorFrom((await findAccount(db, accountId))?.name ?? '')
    if (descriptors.size > 10_000) descriptors.clear()
    descriptors.set(accountId, { text, until: Date.now() + 60_000 })
    return text
  }

  /**
   * A new charge: recorded pending with its source taken, in one transaction, then authorized
   * outside it, so no transaction waits on the processor. A retry of a request whose process died
   * (same Idempotency-Key) carries on with the charge its first attempt made.
   */
  async function create(
    scope: Scope,
    input: CreateChargeInput,
    url: HostedPageUrl,
    idempotencyKey?: string,
  ): Promise<ChargeView> {
    ctx.processorFor(scope.livemode)
    const [violation, ...more] = chargeBodyViolations(input)
    if (violation) throw invalidParams([violation, ...more])

    if (idempotencyKey) {
      const earlier = await getChargeByKey(db, scope, idempotencyKey)
      if (earlier) return resume(scope, earlier, url)
    }

    const fields: NewCharge = {
      id: newId('charge'),
      source_id: input.source,
      customer_id: input.customer ?? null,
      amount: input.amount,
      currency: normalizeCurrency(input.currency) as string,
      description: input.description ?? '',
      statement_descriptor: input.statement_descriptor ?? (await defaultDescriptor(scope.accountId)),
      capture: input.capture ?? true,
      require_auth: input.require_auth ?? true,
      metadata: input.metadata ?? {},
      idempotency_key: idempotencyKey ?? null,
    }
    const { charge, source } = await db.transaction(async (tx) => {
      const source = await takeSource(tx, scope, input)
      return { charge: await insertCharge(tx, scope, fields), source }
    })
    return auth.authorize(scope, charge, source, url, false)
  }

  return { create }
}
