import { canRefund, statusAfterRefunds } from '../../domain/charge-state.js'
import { notFound } from '../../errors.js'
import { ProcessorError } from '../../processor/processor.js'
import type { ChargeView } from '../../schemas/charge.js'
import { type ChargeRow, getCharge, patchCharge } from '../../store/charges.js'
import { makeId } from '../../store/ids.js'
import { getRefundByKey, insertRefund, type RefundRow, setRefundStatus } from '../../store/refunds.js'
import type { Scope } from '../../store/scope.js'
import { type ChargeContext, refuse } from './context.js'
import { currentView, loadView } from './views.js'

const DEFAULT_REFUND_REASON = 'requested_by_customer'

export function refunds(ctx: ChargeContext) {
  const { db, events } = ctx

  /**
   * The refund is recorded pending, and its amount reserved on the locked charge, before the
   * processor is called; concurrent refunds therefore can never add up past the amount.
   */
  async function refund(
    scope: Scope,
    id: string,
    input: { amount?: number | undefined; reason?: string | undefined },
    key?: string,
  ): Promise<ChargeView> {
    const reserved = await db.transaction(async (tx) => {
      const row = await getCharge(tx, scope, id, true)
      if (!row) throw notFound('charge', id)
      // a retry of a refund whose process died: the refund is already recorded
      const earlier = key ? await getRefundByKey(tx, id, key) : undefined
      if (earlier) return { refund: earlier, resumed: true, row }
      refuse(canRefund(row, input.amount))
      const amount = input.amount ?? row.amount - row.amount_refunded
      const refund = await insertRefund(tx, {
        id: await makeId(tx, scope, 'refund'),
        charge_id: id,
        amount,
        currency: row.currency,
        reason: input.reason ?? DEFAULT_REFUND_REASON,
        idempotency_key: key ?? null,
      })
      // the amount is held at once; the status changes, with its event, when the processor answers
      return {
        refund,
        resumed: false,
        row: await patchCharge(tx, id, { amount_refunded: row.amount_refunded + amount }),
      }
    })
    if (reserved.resumed && reserved.refund.status !== 'pending') return loadView(db, reserved.row)
    return settleRefund(scope, reserved.refund, reserved.row)
  }

  /**
   * Asks the processor for a recorded refund, by the reference of the charge's authorization, and
   * records its answer. When the processor cannot be reached the refund stays pending and the
   * recovery sweep asks again (the refund id makes the request idempotent at the processor).
   */
  async function settleRefund(scope: Scope, refund: RefundRow, charge: ChargeRow): Promise<ChargeView> {
    let ok: boolean
    try {
      const outcome = await ctx
        .processorFor(scope.livemode)
        .refund(charge.processor_ref ?? '', refund.amount, refund.currency, refund.id)
      ok = outcome.outcome === 'succeeded'
    } catch (err) {
      if (!(err instanceof ProcessorError)) throw err
      return currentView(db, scope, refund.charge_id)
    }
    return db.transaction(async (tx) => {
      const current = (await getCharge(tx, scope, refund.charge_id, true)) as ChargeRow
      const settled = await setRefundStatus(tx, refund.id, ok ? 'succeeded' : 'failed')
      if (!settled) return loadView(tx, current)
      // a failed refund gives its reservation back
      const refunded = ok ? current.amount_refunded : current.amount_refunded - refund.amount
      const row = await patchCharge(tx, refund.charge_id, {
        amount_refunded: refunded,
        status: statusAfterRefunds(current, settled.confirmed),
      })
      const view = await loadView(tx, row)
      await events.record(tx, scope, ok ? 'charge.refunded' : 'charge.refund_failed', view)
      return view
    })
  }

  return { refund, settleRefund }
}

export type Refunds = ReturnType<typeof refunds>
