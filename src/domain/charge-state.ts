/**
 * The charge state machine, as pure rules. A charge is `pending` while the payer acts,
 * `succeeded` once authorized (captured at once or later), `failed` when declined, `voided` when
 * an uncaptured authorization is cancelled, and `refunded` when refunds reach the captured amount.
 * `processing` names an operation under way with the processor; no other may start meanwhile.
 */
export type ChargeStatus = 'pending' | 'succeeded' | 'failed' | 'voided' | 'refunded'

export interface ChargeState {
  status: ChargeStatus
  authorized: boolean
  captured: boolean
  amount: number
  amount_refunded: number
  processing: string | null
}

export interface Refusal {
  code: 'charge_not_capturable' | 'charge_not_voidable' | 'charge_not_refundable' | 'amount_too_large'
  message: string
}

function describe(c: ChargeState): string {
  if (c.processing) return `${(c.processing.split(':')[0] ?? '').replace(/e?$/, 'ing')} charge`
  if (c.status === 'succeeded') return c.captured ? 'captured charge' : 'authorized charge'
  return `${c.status} charge`
}

const article = (text: string) => (/^[aeiou]/.test(text) ? `An ${text}` : `A ${text}`)

export function canCapture(c: ChargeState, amount: number | undefined): Refusal | undefined {
  if (c.status !== 'succeeded' || !c.authorized || c.captured || c.processing) {
    return { code: 'charge_not_capturable', message: `${article(describe(c))} cannot be captured` }
  }
  if (amount !== undefined && amount > c.amount) {
    return { code: 'amount_too_large', message: `The capture amount ${amount} exceeds the authorized ${c.amount}` }
  }
  return undefined
}

export function canVoid(c: ChargeState): Refusal | undefined {
  if (c.status !== 'succeeded' || !c.authorized || c.captured || c.processing) {
    return { code: 'charge_not_voidable', message: `${article(describe(c))} cannot be voided` }
  }
  return undefined
}

export function refundable(c: ChargeState): number {
  return c.amount - c.amount_refunded
}

export function canRefund(c: ChargeState, amount: number | undefined): Refusal | undefined {
  if (c.status !== 'succeeded' || !c.captured) {
    return { code: 'charge_not_refundable', message: `${article(describe(c))} cannot be refunded` }
  }
  const left = refundable(c)
  if (left <= 0) return { code: 'charge_not_refundable', message: 'The charge has been refunded in full' }
  if (amount !== undefined && amount > left) {
    return { code: 'amount_too_large', message: `The refund amount ${amount} exceeds the ${left} left to refund` }
  }
  return undefined
}

/** Waiting for the payer: the hosted page or the OTP step may move it on. */
export function isAwaitingPayer(c: ChargeState): boolean {
  return c.status === 'pending' && !c.processing
}

/**
 * Status of a captured charge whose refunds the processor has confirmed total `confirmed`: a
 * refund still pending may yet fail, so it refunds nothing yet.
 */
export function statusAfterRefunds(c: Pick<ChargeState, 'amount'>, confirmed: number): ChargeStatus {
  return confirmed >= c.amount ? 'refunded' : 'succeeded'
}
