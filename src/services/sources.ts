import type { Vault } from '../crypto/vault.js'
import { cardExpired, cardProfile, luhnValid } from '../domain/card.js'
import { newId } from '../domain/ids.js'
import { AppError, invalidParam, notFound } from '../errors.js'
import type { CreateSourceInput, SourceView } from '../http/schemas/source.js'
import type { Db } from '../store/db.js'
import type { Scope } from '../store/scope.js'
import * as sources from '../store/sources.js'
import { sourceView } from './views.js'

/** Schemes a browser must never be sent to from a hosted page. */
const UNSAFE_SCHEMES = /^\s*(javascript|data|vbscript|file):/i

export type NotifyAddressCheck = (url: string, livemode: boolean) => Promise<string | undefined>

export function sourceService(deps: { db: Db; vault: Vault; checkNotifyAddress: NotifyAddressCheck }) {
  const { db, vault } = deps

  async function create(scope: Scope, input: CreateSourceInput, idempotencyKey?: string): Promise<SourceView> {
    // a retry of a request whose process died after storing the source
    if (idempotencyKey) {
      const earlier = await sources.getSourceByKey(db, scope, idempotencyKey)
      if (earlier) return sourceView(earlier)
    }
    if (input.type === 'card' && !input.card) {
      throw invalidParam('parameter_missing', 'card', 'card is required for a source of type card', 'missing')
    }
    if (input.type !== 'card' && input.card) {
      throw invalidParam('parameter_unknown', 'card', `card is only for a source of type card, not ${input.type}`)
    }
    if (input.type !== 'card' && !input.redirect) {
      throw invalidParam(
        'parameter_missing',
        'redirect',
        `redirect is required for a source of type ${input.type}`,
        'missing',
      )
    }
    if (input.redirect) {
      for (const field of ['success', 'fail'] as const) {
        if (UNSAFE_SCHEMES.test(input.redirect[field])) {
          throw invalidParam('parameter_invalid', `redirect.${field}`, `redirect.${field} must not use that scheme`)
        }
      }
      if (input.redirect.notify !== undefined) {
        const problem = await deps.checkNotifyAddress(input.redirect.notify, scope.livemode)
        if (problem) throw invalidParam('parameter_invalid', 'redirect.notify', problem)
      }
    }

    let card: Record<string, unknown> | null = null
    let numberEnc: string | null = null
    let cvcEnc: string | null = null
    if (input.card) {
      const c = input.card
      if (!luhnValid(c.number)) {
        throw invalidParam('card_number_invalid', 'card.number', 'The card number is not a valid card number')
      }
      if (cardExpired(Number(c.exp_month), Number(c.exp_year))) {
        throw invalidParam('card_expired', 'card.exp_year', "The card's expiration date is in the past")
      }
      const { number, cvc, ...shown } = c
      card = {
        object: 'card',
        id: newId('card'),
        ...shown,
        last4: number.slice(-4),
        ...cardProfile(number, scope.livemode),
        cvc_checked: 'unchecked',
      }
      numberEnc = vault.encrypt(number)
      cvcEnc = vault.encrypt(cvc)
    }

    const row = await sources.insertSource(db, scope, {
      id: newId('source'),
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

  return { create, get }
}

export type SourceService = ReturnType<typeof sourceService>

/** Tells why a consume failed: the source does not exist for this caller, or is used. */
export async function whyNotConsumed(db: Db, scope: Scope, id: string): Promise<AppError> {
  const row = await sources.getSource(db, scope, id)
  if (!row) return notFound('source', id)
  return new AppError('source_used', `The source ${id} has already been used`, { param: 'source' })
}
