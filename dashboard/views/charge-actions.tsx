import { useState } from 'preact/hooks'
import type { Charge } from '../../src/client/api.js'
import { formatAmount, parseAmount } from '../../src/domain/amount-format.js'
import { majorUnits } from '../../src/domain/money.js'
import { ConfirmAction, type Plan } from './confirm.js'

/**
 * The amount typed, in the smallest unit, at most `most`; empty is `most`. A string says what is
 * wrong with it.
 */
function amountOf(text: string, currency: string, most: number): number | string {
  if (text.trim() === '') return most
  const minor = parseAmount(text, currency)
  if (minor === undefined || minor <= 0) {
    return `Enter an amount in ${currency.toUpperCase()}, e.g. ${majorUnits(most, currency)}`
  }
  if (minor > most) return `At most ${formatAmount(most, currency)}`
  return minor
}

function AmountField({
  name,
  currency,
  most,
  value,
  set,
}: {
  name: string
  currency: string
  most: string
  value: string
  set: (v: string) => void
}) {
  return (
    <label>
      Amount ({currency.toUpperCase()}; empty: all {most})
      <input name={name} value={value} onInput={(e) => set((e.target as HTMLInputElement).value)} />
    </label>
  )
}

/** Capture of an authorization, in full or in part: a partial capture releases the rest. */
export function CaptureForm({ charge, capture }: { charge: Charge; capture: (amount: number) => Promise<unknown> }) {
  const [amount, setAmount] = useState('')
  const money = (n: number) => formatAmount(n, charge.currency)
  const plan = (): Plan | string => {
    const minor = amountOf(amount, charge.currency, charge.amount)
    if (typeof minor === 'string') return minor
    return {
      question:
        minor === charge.amount
          ? `Capture ${money(minor)} (all that is authorized)? It can no longer be voided.`
          : `Capture ${money(minor)} of the ${money(charge.amount)} authorized? The other ${money(charge.amount - minor)} is released.`,
      run: async () => {
        await capture(minor)
        setAmount('')
      },
    }
  }
  return (
    <fieldset class="money-action">
      <legend>Capture</legend>
      <AmountField
        name="capture-amount"
        currency={charge.currency}
        most={`${money(charge.amount)} authorized`}
        value={amount}
        set={setAmount}
      />
      <ConfirmAction label="Capture" plan={plan} resetOn={amount} />
    </fieldset>
  )
}

export function VoidAction({ charge, voidIt }: { charge: Charge; voidIt: () => Promise<unknown> }) {
  return (
    <ConfirmAction
      label="Void"
      danger
      plan={() => ({
        question: `Void this charge? Its ${formatAmount(charge.amount, charge.currency)} authorization is released, and it can no longer be captured.`,
        run: voidIt,
      })}
    />
  )
}

/**
 * A refund, of all that is left when no amount is typed. The amount asked about is the one sent,
 * so that a refund made meanwhile elsewhere is refused (amount_too_large) rather than this one
 * refunding other than it said.
 */
export function RefundForm({
  charge,
  refund,
}: {
  charge: Charge
  refund: (amount: number, reason?: string) => Promise<unknown>
}) {
  const left = charge.amount - charge.amount_refunded
  const [amount, setAmount] = useState('')
  const [reason, setReason] = useState('')
  const money = (n: number) => formatAmount(n, charge.currency)
  const plan = (): Plan | string => {
    const minor = amountOf(amount, charge.currency, left)
    if (typeof minor === 'string') return minor
    return {
      question: `Refund ${money(minor)}${minor === left ? ' (all that is left)' : ` of the ${money(left)} left`}? This cannot be undone.`,
      run: async () => {
        await refund(minor, reason.trim() || undefined)
        setAmount('')
        setReason('')
      },
    }
  }
  return (
    <fieldset class="money-action">
      <legend>Refund</legend>
      <AmountField
        name="refund-amount"
        currency={charge.currency}
        most={`${money(left)} left`}
        value={amount}
        set={setAmount}
      />
      <label>
        Reason
        <input name="refund-reason" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      </label>
      <ConfirmAction label="Refund" danger plan={plan} resetOn={`${amount}\n${reason}`} />
    </fieldset>
  )
}
