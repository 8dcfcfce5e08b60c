import { type ChargeState, canCapture, canVoid } from '../../domain/charge-state.js'
import { AppError, notFound } from '../../errors.js'
import { type Processor, ProcessorError } from '../../processor/processor.js'
import type { ChargeView } from '../../schemas/charge.js'
import {
  type ChargePatch,
  type ChargeRow,
  getCharge,
  patchCharge,
  patchHeldCharge,
  patchOperationUnderWay,
} from '../../store/charges.js'
import type { Scope } from '../../store/scope.js'
import { type ChargeContext, refuse } from './context.js'
import { currentView, loadView } from './views.js'

/** `capture:<amount>`: the operation names the amount, so a recovery can finish it. */
const captureOperation = (amount: number) => `capture:${amount}`

export function captureAndVoid(ctx: ChargeContext) {
  const { db, events } = ctx

  /**
   * Marks an operation as under way on a locked charge, after the state machine allows it, so a
   * concurrent second operation is refused; the processor is called after this commits. A retry
   * of the request that began the operation (same Idempotency-Key) gets `resumed` instead.
   */
  async function begin(
    scope: Scope,
    id: string,
    operation: (c: ChargeRow) => string,
    check: (c: ChargeState & ChargeRow) => void,
    key: string | undefined,
  ): Promise<{ row: ChargeRow; resumed: boolean }> {
    return db.transaction(async (tx) => {
      const row = await getCharge(tx, scope, id, true)
      if (!row) throw notFound('charge', id)
      if (key !== undefined && row.operation_key === key) return { row, resumed: true }
      check(row)
      return {
        row: await patchCharge(tx, id, { processing: operation(row), operation_key: key ?? null }),
        resumed: false,
      }
    })
  }

  /**
   * Records an operation's outcome and its event, in one transaction, while the operation is under
   * way: a run the sweep took over still records the processor's answer to its own call, so that
   * its client is told the operation was done.
   */
  async function finish(scope: Scope, held: ChargeRow, patch: ChargePatch, eventType: string): Promise<ChargeView> {
    const view = await db.transaction(async (tx) => {
      const row = await patchOperationUnderWay(tx, held, patch)
      if (!row) return undefined
      const view = await loadView(tx, row)
      await events.record(tx, scope, eventType, view)
      return view
    })
    // another run of the operation ended it first: the charge is as that run left it
    return view ?? currentView(db, scope, held.id)
  }

  /**
   * A capture or void the processor gave no answer to. It may have acted all the same, so the
   * operation stays under way, named on the charge with its key: the recovery sweep sends it
   * again (the authorization's reference makes that safe) until the processor answers, and a
   * retry with the same Idempotency-Key sends it at once. Only a first call that the processor
   * refused (4xx) or that never reached it surely did nothing, and a fault of the service's own did
   * nothing at the processor; then the charge is let go as it was, with its key. A `repeated` call
   * follows one that may have reached the processor: its refusal says nothing of that one. When
   * another run of the operation ended it meanwhile, the charge is answered as that run left it.
   */
  async function unanswered(
    scope: Scope,
    held: ChargeRow,
    what: string,
    err: unknown,
    repeated: boolean,
  ): Promise<ChargeView> {
    if (err instanceof ProcessorError && (repeated || !err.didNothing)) {
      throw new AppError(
        'processor_error',
        `The payment processor gave no answer to the ${what} (${err.kind}); it is sent again in the background until it answers, and the charge then shows the outcome`,
      )
    }
    if (!(await patchHeldCharge(db, held, { processing: null, operation_key: null }))) {
      return currentView(db, scope, held.id)
    }
    if (err instanceof ProcessorError) {
      const fault = err.kind === 'refused' ? `refused the ${what} request` : `could not be reached for the ${what}`
      throw new AppError('processor_error', `The payment processor ${fault}; nothing changed`)
    }
    throw err
  }

  /**
   * The processor refused: not a fault of the service, so a 400 the client can act on (unless
   * another run of the operation ended it meanwhile: the charge is then answered as it left it).
   */
  async function declined(
    scope: Scope,
    held: ChargeRow,
    what: string,
    failure: { reason: string },
  ): Promise<ChargeView> {
    if (!(await patchHeldCharge(db, held, { processing: null, operation_key: null }))) {
      return currentView(db, scope, held.id)
    }
    throw new AppError('processor_declined', `The processor refused the ${what}: ${failure.reason}`)
  }

  /** Sends an operation under way on a charge to the processor, and records its outcome. */
  async function send(
    scope: Scope,
    row: ChargeRow,
    what: 'capture' | 'void',
    call: (processor: Processor, reference: string) => ReturnType<Processor['capture']>,
    done: { patch: ChargePatch; eventType: string },
    repeated: boolean,
  ): Promise<ChargeView> {
    let outcome: Awaited<ReturnType<Processor['capture']>>
    try {
      // the processor's reference names the authorization: no card data is needed past it
      outcome = await call(ctx.processorFor(scope.livemode), row.processor_ref ?? '')
    } catch (err) {
      return unanswered(scope, row, what, err, repeated)
    }
    if (outcome.outcome === 'declined') return declined(scope, row, what, outcome.failure)
    return finish(scope, row, { ...done.patch, processing: null }, done.eventType)
  }

  const sendCapture = (scope: Scope, row: ChargeRow, amount: number, repeated: boolean) =>
    send(
      scope,
      row,
      'capture',
      (p, ref) => p.capture(ref, amount, row.currency),
      { patch: { captured: true, amount }, eventType: 'charge.captured' },
      repeated,
    )

  const sendVoid = (scope: Scope, row: ChargeRow, repeated: boolean) =>
    send(
      scope,
      row,
      'void',
      (p, ref) => p.void(ref),
      { patch: { status: 'voided', authorized: false }, eventType: 'charge.voided' },
      repeated,
    )

  /**
   * Sends again the capture or void a charge has under way (its first call may have reached the
   * processor); undefined when the operation is neither.
   */
  function resume(scope: Scope, row: ChargeRow): Promise<ChargeView> | undefined {
    const op = row.processing ?? ''
    if (op.startsWith('capture:')) {
      return sendCapture(scope, row, Number(op.slice('capture:'.length)) || row.amount, true)
    }
    if (op === 'void') return sendVoid(scope, row, true)
    return undefined
  }

  async function capture(scope: Scope, id: string, amount: number | undefined, key?: string): Promise<ChargeView> {
    const { row, resumed } = await begin(
      scope,
      id,
      (c) => captureOperation(amount ?? c.amount),
      (c) => refuse(canCapture(c, amount)),
      key,
    )
    if (resumed) return resume(scope, row) ?? loadView(db, row)
    return sendCapture(scope, row, amount ?? row.amount, false)
  }

  async function voidCharge(scope: Scope, id: string, key?: string): Promise<ChargeView> {
    const { row, resumed } = await begin(
      scope,
      id,
      () => 'void',
      (c) => refuse(canVoid(c)),
      key,
    )
    if (resumed) return resume(scope, row) ?? loadView(db, row)
    return sendVoid(scope, row, false)
  }

  return { capture, void: voidCharge, resume, begin }
}

export type CaptureAndVoid = ReturnType<typeof captureAndVoid>
