import type { ComponentChildren } from 'preact'
import type { Charge, Delivery, Event } from '../../src/client/api.js'
import { ActionButton, Id, Money, RealTime, Status, Time } from './common.js'
import { answerOf, NextAttempt } from './notify.js'

interface Moment {
  at: string
  what: ComponentChildren
  /** what belongs to the moment but runs on another time base: a notify call's attempts */
  under?: ComponentChildren
}

function CallAttempts({ d }: { d: Delivery }) {
  if (d.attempts.length === 0) return null
  return (
    <ol class="call-attempts" aria-label={`Attempts of ${d.id}, at the real time`}>
      {d.attempts.map((a) => (
        <li key={a.number}>
          <RealTime at={a.started_at} /> Notify attempt {a.number} of <Id id={d.id} />: {answerOf(a)} in {a.duration_ms}{' '}
          ms
        </li>
      ))}
    </ol>
  )
}

/**
 * A charge's history in time order: its creation, refunds, events and notify calls, all on one
 * time base (in test mode, the account's clock). A notify call's attempts and its next attempt
 * are on the real time, which the clock may run days ahead of: sorted among the rest they would
 * tell a false sequence, so they are listed under their call, in their own order, labelled.
 */
export function History({
  charge,
  events,
  deliveries,
  redeliver,
}: {
  charge: Charge
  events: Event[]
  deliveries: Delivery[]
  redeliver: (id: string) => Promise<unknown>
}) {
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
          {d.status === 'pending' ? (
            <span class="muted">
              {' '}
              · <NextAttempt d={d} />
            </span>
          ) : null}
          {d.status === 'failed' ? <ActionButton label="Redeliver" run={() => redeliver(d.id)} /> : null}
        </>
      ),
      under: <CallAttempts d={d} />,
    })
  }
  // timestamps share one format (UTC, microseconds), so they sort as text
  moments.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
  return (
    <>
      {charge.livemode ? null : (
        <p class="muted history-note">
          Times follow the account's test clock, which may run ahead of the real time; a notify call's attempts and its
          next attempt are at the real time, and are listed under their call.
        </p>
      )}
      <ol class="timeline">
        {moments.map((m, i) => (
          <li key={i}>
            <Time at={m.at} /> <span>{m.what}</span>
            {m.under}
          </li>
        ))}
      </ol>
    </>
  )
}
