import type { JackdawClient } from '../../src/client/api.js'
import { CaptureForm, RefundForm, VoidAction } from './charge-actions.js'
import { History } from './charge-history.js'
import { sourceLabel } from './charges.js'
import { Id, Money, Show, Status, Time, useLoad } from './common.js'

/** Every object of a list, all its pages: a charge's history leaves out none of it. */
async function everyOne<T>(objects: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const o of objects) all.push(o)
  return all
}

export function ChargeView({ client, id }: { client: JackdawClient; id: string }) {
  const [loaded, reload] = useLoad(
    () =>
      Promise.all([
        client.charges.retrieve(id),
        everyOne(client.all(client.events.list, { charge: id, limit: 100 })),
        everyOne(client.all(client.deliveries.list, { charge: id, limit: 100 })),
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
            {uncaptured ? (
              <>
                <CaptureForm
                  charge={charge}
                  capture={(amount) => after(client.charges.capture(charge.id, { amount }))}
                />
                <div class="actions">
                  <VoidAction charge={charge} voidIt={() => after(client.charges.void(charge.id))} />
                </div>
              </>
            ) : null}
            {refundable ? (
              <RefundForm
                charge={charge}
                refund={(amount, reason) =>
                  after(client.charges.refund(charge.id, { amount, ...(reason ? { reason } : {}) }))
                }
              />
            ) : null}
            <h2>History</h2>
            <History
              charge={charge}
              events={events}
              deliveries={deliveries}
              redeliver={(d) => after(client.deliveries.redeliver(d))}
            />
          </section>
        )
      }}
    </Show>
  )
}
