import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { JackdawError, type List } from '../../src/client/api.js'
import { formatAmount } from '../../src/domain/amount-format.js'
import { href } from '../router.js'

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'ready'; value: T }

const same = (a: unknown[], b: unknown[]) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]))

/**
 * Runs `load` when `deps` change; `reload` runs it again (after an action). What was loaded for
 * other `deps` is not shown meanwhile, but loading: its rows and buttons would read as, and act
 * on, what was asked before. A reload keeps showing what it refreshes.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<{ deps: unknown[]; loaded: Loaded<T> }>({ deps, loaded: { state: 'loading' } })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    load().then(
      (value) => live && setLoaded({ deps, loaded: { state: 'ready', value } }),
      (err: unknown) => live && setLoaded({ deps, loaded: { state: 'error', message: describe(err) } }),
    )
    return () => {
      live = false
    }
  }, [...deps, round])
  // decided as the page is drawn, not in an effect after it, which would leave one frame to click in
  return [same(loaded.deps, deps) ? loaded.loaded : { state: 'loading' }, useCallback(() => setRound((n) => n + 1), [])]
}

export function describe(err: unknown): string {
  if (err instanceof JackdawError) return `${err.message} (${err.code})`
  return err instanceof Error ? err.message : String(err)
}

export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (value: T) => ComponentChildren }) {
  if (loaded.state === 'loading') return <p class="muted">Loading…</p>
  if (loaded.state === 'error')
    return (
      <p class="error" role="alert">
        {loaded.message}
      </p>
    )
  return <>{children(loaded.value)}</>
}

export function Money({ amount, currency }: { amount: number; currency: string }) {
  return <span class="money">{formatAmount(amount, currency)}</span>
}

export function Status({ status }: { status: string }) {
  return <span class={`status status-${status}`}>{status}</span>
}

function local(at: string): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
}

/**
 * A time as the reader's clock shows it, with the exact value on hover. In test mode, an object's
 * time is on its account's test clock (see RealTime for the times that are not).
 */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>
  return (
    <time dateTime={at} title={at}>
      {local(at)}
    </time>
  )
}

/**
 * A time of the notify worker (an attempt's start, the next attempt due), which is always the real
 * time, where the times of test-mode objects follow the account's test clock and may be days
 * ahead: labelled, so that the two are never read as one sequence. `bare` leaves the label to a
 * column's header.
 */
export function RealTime({ at, bare }: { at: string | null | undefined; bare?: boolean }) {
  if (!at) return <span class="muted">—</span>
  return (
    <>
      <time class="real-time" dateTime={at} title={`${at}: real time, not the account's test clock`}>
        {local(at)}
      </time>
      {bare ? null : <span class="real-time-label"> (real time)</span>}
    </>
  )
}

export function Id({ id }: { id: string }) {
  return <code class="id">{id}</code>
}

export function ChargeLink({ id }: { id: string }) {
  return (
    <a href={href(['charges', id])}>
      <Id id={id} />
    </a>
  )
}

/**
 * The paging of the API: "Next" goes on after the last object shown (start_after), as the list's
 * `next` says there is more; "First page" starts over.
 */
export function Pager<T extends { id?: string | undefined }>({
  list,
  path,
  query,
}: {
  list: List<T>
  path: string
  query: Record<string, string | undefined>
}) {
  const last = list.data[list.data.length - 1]
  return (
    <nav class="pager" aria-label="Pages">
      {query.start_after ? <a href={href(path, { ...query, start_after: undefined })}>First page</a> : <span />}
      {list.next && last?.id ? <a href={href(path, { ...query, start_after: last.id })}>Next page</a> : null}
    </nav>
  )
}

/** A button that runs an action, shows it running, and reports its error. */
/** What went wrong with the last action, read out by screen readers as it appears. */
export function ErrorNote({ error }: { error: string | undefined }) {
  return error ? (
    <span class="error" role="alert">
      {error}
    </span>
  ) : null
}

export function ActionButton({ label, run, danger }: { label: string; run: () => Promise<unknown>; danger?: boolean }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const click = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await run()
    } catch (err) {
      setError(describe(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <span class="action">
      <button type="button" class={danger ? 'danger' : ''} disabled={busy} onClick={click}>
        {busy ? `${label}…` : label}
      </button>
      <ErrorNote error={error} />
    </span>
  )
}
