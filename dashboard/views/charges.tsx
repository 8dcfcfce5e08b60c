import { useState } from 'preact/hooks'
import type { Charge, ChargeListParams, JackdawClient } from '../../src/client/api.js'
import { href, type Route } from '../router.js'
import { ChargeLink, Money, Pager, Show, Status, Time, useLoad } from './common.js'

const STATUSES = ['pending', 'succeeded', 'failed', 'voided', 'refunded'] as const

export function sourceLabel(c: Pick<Charge, 'source'>): string {
  const s = c.source
  if (s.card) return `${s.card.brand} •••• ${s.card.last4}`
  if (s.bank_account) return `${s.type} ${s.bank_account.account_number}`
  return s.type
}

export function ChargesView({ client, route }: { client: JackdawClient; route: Route }) {
  const status = (route.query.get('status') ?? undefined) as ChargeListParams['status']
  const startAfter = route.query.get('start_after') ?? undefined
  const [search, setSearch] = useState('')
  const [loaded] = useLoad(
    () => client.charges.list({ status, start_after: startAfter, limit: 20 }),
    [status, startAfter],
  )
  const find = (e: Event) => {
    e.preventDefault()
    const id = search.trim()
    if (id) location.hash = href(['charges', id])
  }
  return (
    <section>
      <header class="view-head">
        <h1>Charges</h1>
        <form class="search" onSubmit={find}>
          <input
            aria-label="Charge id"
            placeholder="Find a charge by id (ch_…)"
            value={search}
            onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
          />
          <button type="submit">Find</button>
        </form>
      </header>
      <nav class="filters" aria-label="Status">
        <a href={href('/charges')} class={status ? '' : 'current'}>
          All
        </a>
        {STATUSES.map((s) => (
          <a key={s} href={href('/charges', { status: s })} class={status === s ? 'current' : ''}>
            {s}
          </a>
        ))}
      </nav>
      <Show loaded={loaded}>
        {(list) => (
          <>
            <table>
              <thead>
                <tr>
                  <th>Amount</th>
                  <th>Status</th>
                  <th>Source</th>
                  <th>Id</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((c) => (
                  <tr key={c.id}>
                    <td class="num">
                      <Money amount={c.amount} currency={c.currency} />
                    </td>
                    <td>
                      <Status status={c.status} />
                      {c.status === 'succeeded' && !c.captured ? <span class="muted"> uncaptured</span> : null}
                    </td>
                    <td>{sourceLabel(c)}</td>
                    <td>
                      <ChargeLink id={c.id} />
                    </td>
                    <td>
                      <Time at={c.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.data.length === 0 ? <p class="muted">No charges{status ? ` in status ${status}` : ''}.</p> : null}
            <Pager list={list} path="/charges" query={{ status, start_after: startAfter }} />
          </>
        )}
      </Show>
    </section>
  )
}
