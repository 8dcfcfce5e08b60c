import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import './style.css'
import './actions.css'
import { href, useRoute } from './router.js'
import { type Session, signIn, signOut, storedKey } from './session.js'
import { ChargeView } from './views/charge.js'
import { ChargesView } from './views/charges.js'
import { describe } from './views/common.js'
import { CustomersView, DeliveriesView, EventsView } from './views/lists.js'
import { SignIn } from './views/signin.js'
import { ClockView, ScenariosView } from './views/test-mode.js'

const SECTIONS = [
  ['charges', 'Charges'],
  ['customers', 'Customers'],
  ['events', 'Events'],
  ['deliveries', 'Notify calls'],
] as const

/** Sections of test mode only: a live key has no test clock and no scenarios. */
const TEST_SECTIONS = [
  ['clock', 'Test clock'],
  ['scenarios', 'Scenarios'],
] as const

/** Each section, and how many parts its address may have after the section's name (a charge's id). */
const ADDRESSES: Record<string, number> = { charges: 1, customers: 0, events: 0, deliveries: 0, clock: 0, scenarios: 0 }

/** An address no view answers: said so, rather than another view shown as if it were asked for. */
function NotFound() {
  return (
    <section>
      <header class="view-head">
        <h1>Not found</h1>
      </header>
      <p>
        The dashboard has no view at <code>{location.hash}</code>.
      </p>
      <p>
        <a href={href('/charges')}>Back to charges</a>
      </p>
    </section>
  )
}

function Signed({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const route = useRoute()
  const [section = 'charges', id] = route.parts
  const { client, account } = session
  const live = account.livemode
  const known = Object.hasOwn(ADDRESSES, section) && route.parts.length <= 1 + (ADDRESSES[section] ?? 0)
  let view = <ChargesView client={client} route={route} />
  if (!known) view = <NotFound />
  // keyed by its id: another charge is a new view, with no question, typed amount or action of
  // the one before, whose "Yes" would otherwise act on the charge no longer shown
  else if (section === 'charges' && id) view = <ChargeView key={id} client={client} id={id} />
  else if (section === 'customers') view = <CustomersView client={client} route={route} />
  else if (section === 'events') view = <EventsView client={client} route={route} />
  else if (section === 'deliveries') view = <DeliveriesView client={client} route={route} />
  else if (section === 'clock' || section === 'scenarios') {
    if (live) view = <p class="muted">The test clock and scenarios are in test mode only.</p>
    else view = section === 'clock' ? <ClockView client={client} /> : <ScenariosView client={client} />
  }
  return (
    <div class={live ? 'shell live' : 'shell test'}>
      <header class="top">
        <strong class="brand">Jackdaw</strong>
        <span class="account">{account.name}</span>
        <span class={`mode ${live ? 'mode-live' : 'mode-test'}`} data-testid="mode">
          {live ? 'Live mode' : 'Test mode'}
        </span>
        <nav class="sections">
          {[...SECTIONS, ...(live ? [] : TEST_SECTIONS)].map(([path, label]) => (
            <a key={path} href={href(`/${path}`)} class={known && section === path ? 'current' : ''}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" class="signout" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>{view}</main>
    </div>
  )
}

function App() {
  const [session, setSession] = useState<Session>()
  const [restoring, setRestoring] = useState(() => storedKey() !== null)
  const [error, setError] = useState<string>()
  useEffect(() => {
    const key = storedKey()
    if (!key) return
    signIn(key)
      .then(setSession, (err: unknown) => {
        signOut()
        setError(describe(err))
      })
      .finally(() => setRestoring(false))
  }, [])
  if (restoring) return <p class="muted">Signing in…</p>
  if (!session) {
    return (
      <>
        {error ? <p class="error">{error}</p> : null}
        <SignIn onSignIn={async (key) => setSession(await signIn(key))} />
      </>
    )
  }
  return (
    <Signed
      session={session}
      onSignOut={() => {
        signOut()
        setSession(undefined)
      }}
    />
  )
}

render(<App />, document.getElementById('app') as HTMLElement)
