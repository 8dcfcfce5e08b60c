import { normalizeCurrency } from '../../domain/money.js'
import { redirectAddressProblem } from '../../domain/redirect-address.js'
import { AppError, invalidParams, type Violation } from '../../errors.js'
import type { ChargeView, CreateChargeInput } from '../../schemas/charge.js'
import { findAccount } from '../../store/accounts.js'
import { insertCharge, type NewCharge } from '../../store/charge-insert.js'
import { type ChargeRow, getChargeByKey } from '../../store/charges.js'
import { getCustomer } from '../../store/customers.js'
import type { Db } from '../../store/db.js'
import { makeId } from '../../store/ids.js'
import type { Scope } from '../../store/scope.js'
import type { SourceRow } from '../../store/sources.js'
import type { Authorizations } from './authorization.js'
import type { ChargeContext, HostedPageUrl } from './context.js'

/**
 * The rules of a charge's body that its schema cannot state: the currency is one ISO 4217 knows,
 * and the payer's return address is one a browser may be sent to. It reads the body as it came, so
 * that a refused body's answer names these problems as well as the schema's; without a mode (before
 * the key's mode is at hand) http passes and the service checks again.
 */
export function chargeBodyViolations(body: unknown, livemode?: boolean): Violation[] {
  const { currency, redirect_url } =
    typeof body === 'object' && body !== null ? (body as { currency?: unknown; redirect_url?: unknown }) : {}
  const violations: Violation[] = []
  if (typeof currency === 'string' && !normalizeCurrency(currency)) {
    violations.push({
      code: 'parameter_invalid',
      param: 'currency',
      msg: 'currency is not the ISO 4217 code of a currency',
    })
  }
  const problem =
    typeof redirect_url === 'string' ? redirectAddressProblem('redirect_url', redirect_url, livemode) : undefined
  if (problem) violations.push({ code: 'parameter_invalid', param: 'redirect_url', msg: problem })
  return violations
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
 * Why a new charge could not take its source: there is none, the customer named is missing or is
 * not the source's owner, the source is saved to a customer not named, or it is used.
 */
async function whyNotTaken(db: Db, scope: Scope, input: CreateChargeInput, source?: SourceRow): Promise<AppError> {
  if (!source) return new AppError('resource_missing', `No such source: '${input.source}'`, { param: 'source' })
  if (input.customer !== undefined) {
    if (!(await getCustomer(db, scope, input.customer))) {
      return new AppError('resource_missing', `No such customer: '${input.customer}'`, { param: 'customer' })
    }
    if (source.customer_id !== input.customer) {
      return new AppError('customer_source_mismatch', `The source ${source.id} does not belong to ${input.customer}`, {
        param: 'customer',
      })
    }
  } else if (source.customer_id !== null) {
    return new AppError(
      'customer_source_mismatch',
      `The source ${source.id} is saved to a customer; pass that customer to charge it`,
      { param: 'customer' },
    )
  }
  return new AppError('source_used', `The source ${source.id} has already been used`, { param: 'source' })
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
   * A new charge: recorded pending with its source taken (store/charge-insert.ts, insertCharge), then
   * authorized, so no transaction waits on the processor. A retry of a request whose process died
   * (same Idempotency-Key) carries on with the charge its first attempt made.
   */
  async function create(
    scope: Scope,
    input: CreateChargeInput,
    url: HostedPageUrl,
    idempotencyKey?: string,
  ): Promise<ChargeView> {
    ctx.processorFor(scope.livemode)
    const [violation, ...more] = chargeBodyViolations(input, scope.livemode)
    if (violation) throw invalidParams([violation, ...more])

    if (idempotencyKey) {
      const earlier = await getChargeByKey(db, scope, idempotencyKey)
      if (earlier) return resume(scope, earlier, url)
    }

    const fields: NewCharge = {
      id: await makeId(db, scope, 'charge'),
      source_id: input.source,
      customer_id: input.customer ?? null,
      amount: input.amount,
      currency: normalizeCurrency(input.currency) as string,
      description: input.description ?? '',
      statement_descriptor: input.statement_descriptor ?? (await defaultDescriptor(scope.accountId)),
      capture: input.capture ?? true,
      require_auth: input.require_auth ?? true,
      metadata: input.metadata ?? {},
      redirect_url: input.redirect_url ?? null,
      idempotency_key: idempotencyKey ?? null,
    }
    const { charge, source, accountTime } = await insertCharge(db, scope, fields)
    if (!charge || !source) throw await whyNotTaken(db, scope, input, source)
    // the security code sent with the charge serves this authorization only: it is never stored
    return auth.authorize(scope, charge, source, url, {
      repeated: false,
      securityCode: input.cvc,
      readTime: accountTime,
    })
  }

  return { create }
}
