import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import type { Charge, Delivery, Event, JackdawClient } from '../../src/client/api.js'
import { formatAmount, parseAmount } from '../../src/domain/amount-format.js'
import { sourceLabel } from './charges.js'
import { ActionButton, Id, Money, Show, Status, Time, useLoad } from './common.js'

interface Moment {
  at: string
  what: ComponentChildren
  /** where it sorts, when not at its own time */
  sortAt?: string
}

/**
 * The charge's history in time order: its creation, refunds, events and notify calls. A notify
 * attempt's time is the real time, while the rest of a test-mode charge's history is on its
 * account's clock, which may run ahead: an attempt sorts no earlier than its call.
 */
function history(charge: Charge, events: Event[], deliveries: Delivery[], redeliver: (id: string) => Promise<unknown>) {
  const moments: Moment[] = [
    {
      at: charge.created_at,
      what: (
        <>
          Charge created for <Money amount={charge.amount} currency={charge.currency} />
        </>
      ),
    },
  ]
  for (const r of charge.refunds) {
    moments.push({
      at: r.created_at,
      what: (
        <>
          Refund <Id id={r.id} /> of <Money amount={r.amount} currency={r.currency} /> <Status status={r.status} />
          {r.reason ? <span class="muted"> ({r.reason})</span> : null}
        </>
      ),
    })
  }
  for (const e of events) {
    moments.push({
      at: e.created_at,
      what: (
        <>
          Event <strong>{e.type}</strong> <Id id={e.id} />
        </>
      ),
    })
  }
  for (const d of deliveries) {
    moments.push({
      at: d.created_at,
      what: (
        <>
          Notify call <Id id={d.id} /> of {d.event_type} to <code>{d.url}</code> <Status status={d.status} />
          {d.status === 'failed' ? <ActionButton label="Redeliver" run={() => redeliver(d.id)} /> : null}
        </>
      ),
    })
    for (const a of d.attempts) {
      moments.push({
        at: a.started_at,
        sortAt: [d.created_at, a.started_at].sort().at(-1) as string,
        what: (
          <>
            Notify attempt {a.number} of <Id id={d.id} />: {a.status_code !== null ? `HTTP ${a.status_code}` : a.error}{' '}
            in {a.duration_ms} ms
          </>
        ),
      })
    }
  }
  // timestamps share one format (UTC, microseconds), so they sort as text; the sort is stable, so
  // a call's attempts stay after it and in their order
  const key = (m: Moment) => m.sortAt ?? m.at
  return moments.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
}

function RefundForm({
  charge,
  refund,
}: {
  charge: Charge
  refund: (amount: number, reason?: string) => Promise<unknown>
}) {
  const left = charge.amount - charge.amount_refunded
  const [amount, setAmount] = useState('')
  const [reason, setReason] = useState('')
  const [error, setError] = useState<string>()
  const run = async () => {
    const minor = amount.trim() === '' ? left : parseAmount(amount, charge.currency)
    if (minor === undefined || minor <= 0) {
      setError(`Enter an amount in ${charge.currency.toUpperCase()}, e.g. ${formatAmount(left, charge.currency)}`)
      return
    }
    setError(undefined)
    await refund(minor, reason.trim() || undefined)
    setAmount('')
    setReason('')
  }
  return (
    <fieldset class="refund">
      <legend>Refund</legend>
      <label>
        Amount ({charge.currency.toUpperCase()}; empty: all {formatAmount(left, charge.currency)} left)
        <input name="refund-amount" value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Reason
        <input name="refund-reason" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      </label>
      <ActionButton label="Refund" danger run={run} />
      {error ? <p class="error">{error}</p> : null}
    </fieldset>
  )
}

export function ChargeView({ client, id }: { client: JackdawClient; id: string }) {
  const [loaded, reload] = useLoad(
    () =>
      Promise.all([
        client.charges.retrieve(id),
        client.events.list({ charge: id, limit: 100 }),
        client.deliveries.list({ charge: id, limit: 100 }),
      ]),
    [id],
  )
  const after = (p: Promise<unknown>) => p.then(reload)
  return (
    <Show loaded={loaded}>
      {([charge, events, deliveries]) => {
        const uncaptured = charge.status === 'succeeded' && !charge.captured
        const refundable = charge.captured && charge.amount_refunded < charge.amount && charge.status !== 'voided'
        return (
          <section>
            <header class="view-head">
              <h1>
                <Money amount={charge.amount} currency={charge.currency} /> <Status status={charge.status} />
              </h1>
              <Id id={charge.id} />
            </header>
            <dl class="facts">
              <dt>Source</dt>
              <dd>
                {sourceLabel(charge)} <Id id={charge.source.id} />
                {charge.source.card ? <span class="muted"> cvc {charge.source.card.cvc_checked}</span> : null}
              </dd>
              <dt>Captured</dt>
              <dd>{charge.captured ? 'yes' : 'no'}</dd>
              <dt>Refunded</dt>
              <dd>
                <Money amount={charge.amount_refunded} currency={charge.currency} />
              </dd>
              <dt>Description</dt>
              <dd>{charge.description || <span class="muted">—</span>}</dd>
              {charge.failure_data ? (
                <>
                  <dt>Failure</dt>
                  <dd>
                    {charge.failure_data.code}: {charge.failure_data.reason}
                  </dd>
                </>
              ) : null}
              {charge.source.action?.url && charge.status === 'pending' ? (
                <>
                  <dt>Payer step</dt>
                  <dd>
                    <a href={charge.source.action.url}>hosted page</a>
                  </dd>
                </>
              ) : null}
              <dt>Created</dt>
              <dd>
                <Time at={charge.created_at} />
              </dd>
            </dl>
            <div class="actions">
              {uncaptured ? (
                <ActionButton label="Capture" run={() => after(client.charges.capture(charge.id))} />
              ) : null}
              {uncaptured ? (
                <ActionButton label="Void" danger run={() => after(client.charges.void(charge.id))} />
              ) : null}
            </div>
            {refundable ? (
              <RefundForm
                charge={charge}
                refund={(amount, reason) =>
                  after(client.charges.refund(charge.id, { amount, ...(reason ? { reason } : {}) }))
                }
              />
            ) : null}
            <h2>History</h2>
            <ol class="timeline">
              {history(charge, events.data, deliveries.data, (d) => after(client.deliveries.redeliver(d))).map(
                (m, i) => (
                  <li key={i}>
                    <Time at={m.at} /> <span>{m.what}</span>
                  </li>
                ),
              )}
            </ol>
          </section>
        )
      }}
    </Show>
  )
}
