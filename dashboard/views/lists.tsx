import type { JackdawClient } from '../../src/client/api.js'
import type { Route } from '../router.js'
import { ActionButton, ChargeLink, Id, Pager, RealTime, Show, Status, Time, useLoad } from './common.js'
import { answerOf, NextAttempt } from './notify.js'

export function CustomersView({ client, route }: { client: JackdawClient; route: Route }) {
  const startAfter = route.query.get('start_after') ?? undefined
  const [loaded] = useLoad(() => client.customers.list({ start_after: startAfter, limit: 20 }), [startAfter])
  return (
    <section>
      <header class="view-head">
        <h1>Customers</h1>
      </header>
      <Show loaded={loaded}>
        {(list) => (
          <>
            <table>
              <thead>
                <tr>
                  <th>Email</th>
                  <th>Description</th>
                  <th>Sources</th>
                  <th>Id</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((c) => (
                  <tr key={c.id}>
                    <td>{c.email}</td>
                    <td>{c.description}</td>
                    <td>
                      {c.sources.length === 0 ? <span class="muted">none</span> : null}
                      <ul class="plain">
                        {c.sources.map((s) => (
                          <li key={s.id}>
                            {s.card
                              ? `${s.card.brand} •••• ${s.card.last4} (${s.card.exp_month}/${s.card.exp_year})`
                              : s.type}
                            {s.bank_account ? ` ${s.bank_account.bank_code} ${s.bank_account.account_number}` : ''}{' '}
                            <Id id={s.id} />
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>
                      <Id id={c.id ?? ''} />
                    </td>
                    <td>
                      <Time at={c.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.data.length === 0 ? <p class="muted">No customers.</p> : null}
            <Pager list={list} path="/customers" query={{ start_after: startAfter }} />
          </>
        )}
      </Show>
    </section>
  )
}

export function EventsView({ client, route }: { client: JackdawClient; route: Route }) {
  const startAfter = route.query.get('start_after') ?? undefined
  const [loaded] = useLoad(() => client.events.list({ start_after: startAfter, limit: 20 }), [startAfter])
  return (
    <section>
      <header class="view-head">
        <h1>Events</h1>
      </header>
      <Show loaded={loaded}>
        {(list) => (
          <>
            <table>
              <thead>
                <tr>
                  <th>Type</th>
                  <th>Charge</th>
                  <th>Id</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <strong>{e.type}</strong>
                    </td>
                    <td>
                      <ChargeLink id={e.data.object.id} />
                    </td>
                    <td>
                      <Id id={e.id} />
                    </td>
                    <td>
                      <Time at={e.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.data.length === 0 ? <p class="muted">No events.</p> : null}
            <Pager list={list} path="/events" query={{ start_after: startAfter }} />
          </>
        )}
      </Show>
    </section>
  )
}

export function DeliveriesView({ client, route }: { client: JackdawClient; route: Route }) {
  const startAfter = route.query.get('start_after') ?? undefined
  const [loaded, reload] = useLoad(() => client.deliveries.list({ start_after: startAfter, limit: 20 }), [startAfter])
  return (
    <section>
      <header class="view-head">
        <h1>Notify calls</h1>
      </header>
      <Show loaded={loaded}>
        {(list) => (
          <>
            {list.data.map((d) => (
              <article key={d.id} class="delivery">
                <header>
                  <Status status={d.status} /> <strong>{d.event_type}</strong> to <code>{d.url}</code> <Id id={d.id} />
                  {d.status === 'failed' ? (
                    <ActionButton label="Redeliver" run={() => client.deliveries.redeliver(d.id).then(reload)} />
                  ) : null}
                </header>
                <p class="muted">
                  Event <Id id={d.event} /> · queued <Time at={d.created_at} />
                  {d.status === 'pending' ? (
                    <>
                      {' '}
                      · <NextAttempt d={d} />
                    </>
                  ) : null}
                </p>
                {d.attempts.length ? (
                  <table class="attempts">
                    <thead>
                      <tr>
                        <th>#</th>
                        <th>
                          Started <span class="real-time-label">(real time)</span>
                        </th>
                        <th>Answer</th>
                        <th>Duration</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.attempts.map((a) => (
                        <tr key={a.number}>
                          <td>{a.number}</td>
                          <td>
                            <RealTime at={a.started_at} bare />
                          </td>
                          <td class={a.succeeded ? '' : 'error'}>{answerOf(a)}</td>
                          <td class="num">{a.duration_ms} ms</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                ) : null}
              </article>
            ))}
            {list.data.length === 0 ? <p class="muted">No notify calls.</p> : null}
            <Pager list={list} path="/deliveries" query={{ start_after: startAfter }} />
          </>
        )}
      </Show>
    </section>
  )
}
