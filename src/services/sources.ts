import type { Vault } from '../crypto/vault.js'
import { cardExpired, cardProfile, holdsCardNumber, luhnValid } from '../domain/card.js'
import { idsBefore } from '../domain/ids.js'
import { redirectAddressProblem } from '../domain/redirect-address.js'
import { AppError, invalidParams, notFound, type Violation } from '../errors.js'
import { type CreateSourceInput, SOURCE_TYPES, type SourceView } from '../schemas/source.js'
import type { Db } from '../store/db.js'
import { makeId } from '../store/ids.js'
import type { Scope } from '../store/scope.js'
import * as sources from '../store/sources.js'
import { type NotifyAllowList, notifyAddressWithoutLookup } from './notify-address.js'
import { sourceView } from './views.js'

export type NotifyAddressCheck = (url: string, livemode: boolean) => Promise<string | undefined>

export function sourceService(deps: { db: Db; vault: Vault; checkNotifyAddress: NotifyAddressCheck }) {
  const { db, vault } = deps

  async function create(scope: Scope, input: CreateSourceInput, idempotencyKey?: string): Promise<SourceView> {
    // a retry of a request whose process died after storing the source
    if (idempotencyKey) {
      const earlier = await sources.getSourceByKey(db, scope, idempotencyKey)
      if (earlier) return sourceView(earlier)
    }
    // every rule is checked, so one answer names every problem of the body
    const violations = sourceBodyViolations(input, scope.livemode)
    if (input.redirect?.notify !== undefined) {
      const problem = await deps.checkNotifyAddress(input.redirect.notify, scope.livemode)
      if (problem)
        violations.push({ code: 'parameter_invalid', param: 'redirect.notify', msg: `redirect.notify ${problem}` })
    }
    const [first, ...rest] = violations
    if (first) throw invalidParams([first, ...rest])

    let card: Record<string, unknown> | null = null
    let numberEnc: string | null = null
    let cvcEnc: string | null = null
    if (input.card) {
      const c = input.card
      const { number, cvc, ...shown } = c
      card = {
        object: 'card',
        id: await makeId(db, scope, 'card'),
        ...shown,
        last4: number.slice(-4),
        ...cardProfile(number, scope.livemode),
        cvc_checked: 'unchecked',
      }
      numberEnc = vault.encrypt(number)
      cvcEnc = vault.encrypt(cvc)
    }

    const row = await sources.insertSource(db, scope, {
      id: await makeId(db, scope, 'source'),
      type: input.type,
      card,
      cardNumberEnc: numberEnc,
      cardCvcEnc: cvcEnc,
      redirect: input.redirect ?? null,
      owner: input.owner ?? null,
      idempotencyKey: idempotencyKey ?? null,
    })
    return sourceView(row)
  }

  async function get(scope: Scope, id: string): Promise<SourceView> {
    const row = await sources.getSource(db, scope, id)
    if (!row) throw notFound('source', id)
    return sourceView(row)
  }

  /**
   * Erases the card data kept longer than `retentionMs` since its source was made: every security
   * code, and the number of a source never used and no customer's (docs/api.md, card data). A
   * source never charged would otherwise keep them for good. Looks at up to 20 000 sources a call,
   * 500 a statement, going on from where the last call stopped; answers how many sources it
   * erased anything of.
   */
  async function eraseOldCardData(retentionMs: number): Promise<number> {
    const before = idsBefore('source', Date.now() - retentionMs)
    let erased = 0
    for (let i = 0; i < 40; i++) {
      const pass = await sources.eraseOldCardData(db, before, 500)
      erased += pass.erased
      if (pass.seen < 500) break
    }
    for (let i = 0; i < 40; i++) {
      const ahead = await sources.eraseOldTestCardData(db, retentionMs, 500)
      erased += ahead
      if (ahead < 500) break
    }
    return erased
  }

  return { create, get, eraseOldCardData }
}

export type SourceService = ReturnType<typeof sourceService>

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The rules of a source's body that its schema cannot state: which fields each type needs, the
 * redirect addresses' schemes, the card number's check digit and the expiry. They read the body as
 * it came, before or without its schema's check, so that a refused body's answer names these
 * problems as well as the schema's. With `notifyAllow` (the operator's, given when the body is
 * refused before the service sees it), the notify address is checked as far as it can be without
 * a lookup of its host; the service checks it whole.
 */
export function sourceBodyViolations(body: unknown, livemode?: boolean, notifyAllow?: NotifyAllowList): Violation[] {
  if (!isObject(body)) return []
  const violations: Violation[] = []
  const { card, redirect } = body
  // which fields a type needs is known only of the types there are; another is its schema's to name
  const type = SOURCE_TYPES.find((known) => known === body.type)
  if (type === 'card' && card === undefined) {
    violations.push({
      code: 'parameter_missing',
      param: 'card',
      msg: 'card is required for a source of type card',
      type: 'missing',
    })
  }
  if (type !== undefined && type !== 'card' && card !== undefined) {
    violations.push({
      code: 'parameter_unknown',
      param: 'card',
      msg: `card is only for a source of type card, not ${type}`,
    })
  }
  if (type !== undefined && type !== 'card' && redirect === undefined) {
    violations.push({
      code: 'parameter_missing',
      param: 'redirect',
      msg: `redirect is required for a source of type ${type}`,
      type: 'missing',
    })
  }
  if (isObject(redirect)) {
    for (const field of ['success', 'fail'] as const) {
      const address = redirect[field]
      const problem =
        typeof address === 'string' ? redirectAddressProblem(`redirect.${field}`, address, livemode) : undefined
      if (problem) violations.push({ code: 'parameter_invalid', param: `redirect.${field}`, msg: problem })
    }
    if (notifyAllow && livemode !== undefined && typeof redirect.notify === 'string') {
      const verdict = notifyAddressWithoutLookup(redirect.notify, livemode, notifyAllow)
      if ('problem' in verdict && verdict.problem) {
        violations.push({
          code: 'parameter_invalid',
          param: 'redirect.notify',
          msg: `redirect.notify ${verdict.problem}`,
        })
      }
    }
  }
  violations.push(...cardNumbersInText(body))
  if (isObject(card)) {
    if (typeof card.number === 'string' && !luhnValid(card.number)) {
      violations.push({
        code: 'card_number_invalid',
        param: 'card.number',
        msg: 'The card number is not a valid card number',
      })
    }
    // a month or year that is not a number compares as neither past nor present
    if (cardExpired(Number(card.exp_month), Number(card.exp_year))) {
      violations.push({
        code: 'card_expired',
        param: 'card.exp_year',
        msg: "The card's expiration date is in the past",
      })
    }
  }
  return violations
}

const CARD_TEXT = [
  'name',
  'address_line1',
  'address_line2',
  'address_city',
  'address_state',
  'address_country',
  'address_zip',
]
const ADDRESS_TEXT = ['name', 'email', 'line1', 'line2', 'city', 'state', 'country', 'zip_code']

/**
 * The names, email addresses and address lines of a source that hold a card number
 * (domain/card.ts, holdsCardNumber), which would otherwise be kept and shown in clear. A phone
 * number, which may be as long, is not looked at.
 */
function cardNumbersInText(body: Record<string, unknown>): Violation[] {
  const fields: [string, unknown][] = []
  const { card, owner } = body
  if (isObject(card)) for (const f of CARD_TEXT) fields.push([`card.${f}`, card[f]])
  if (isObject(owner)) {
    fields.push(['owner.name', owner.name], ['owner.address_country', owner.address_country])
    for (const part of ['billing', 'shipping']) {
      const address = owner[part]
      if (isObject(address)) for (const f of ADDRESS_TEXT) fields.push([`owner.${part}.${f}`, address[f]])
    }
  }
  return fields
    .filter(([, value]) => typeof value === 'string' && holdsCardNumber(value))
    .map(([param]) => ({ code: 'parameter_invalid', param, msg: `${param} must not hold a card number` }))
}

/**
 * Tells why a consume failed: the source does not exist for this caller, is used, or is a card
 * source whose number is no longer kept (docs/api.md, card data), which could never be charged.
 */
export function whyNotConsumed(id: string, found: sources.SourceConsumption | undefined): AppError {
  if (!found) return notFound('source', id, 'source')
  if (!found.source.used && found.source.type === 'card' && !found.cardKept) {
    return new AppError(
      'card_unavailable',
      `The card number of the source ${id} is no longer kept; ask the payer for the card again and make a new source`,
      { param: 'source' },
    )
  }
  return new AppError('source_used', `The source ${id} has already been used`, { param: 'source' })
}
