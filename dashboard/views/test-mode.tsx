import { useState } from 'preact/hooks'
import type { JackdawClient, Scenario, ScenarioOverrides, ScenarioRun, TestClock } from '../../src/client/api.js'
import { ChargeLink, describe, Id, Show, Status, Time, useLoad } from './common.js'

const UNITS = { seconds: 1, hours: 3600, days: 86_400 } as const
type Unit = keyof typeof UNITS

/** An offset as days, hours, minutes and seconds: "2 d 3 h 0 min 5 s". */
function spelled(seconds: number): string {
  const d = Math.floor(seconds / 86_400)
  const h = Math.floor((seconds % 86_400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return [d ? `${d} d` : '', d || h ? `${h} h` : '', d || h || m ? `${m} min` : '', `${s} s`].filter(Boolean).join(' ')
}

/** The account's test clock: its time and how far it runs ahead, moved forward from here. */
export function ClockView({ client }: { client: JackdawClient }) {
  const [loaded, reload] = useLoad(() => client.testClock.retrieve(), [])
  const [amount, setAmount] = useState('1')
  const [unit, setUnit] = useState<Unit>('hours')
  const [error, setError] = useState<string>()
  const [advanced, setAdvanced] = useState<TestClock>()
  const [busy, setBusy] = useState(false)
  const advance = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    // the last move shown is of an earlier advance: a failed one must not read as done
    setAdvanced(undefined)
    const seconds = Math.round(Number(amount) * UNITS[unit])
    if (!(seconds >= 1)) return setError('Advance by at least a second')
    setBusy(true)
    try {
      setAdvanced(await client.testClock.advance({ seconds }))
      reload()
    } catch (err) {
      setError(describe(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section>
      <header class="view-head">
        <h1>Test clock</h1>
      </header>
      <Show loaded={loaded}>
        {(clock) => (
          <dl class="facts">
            <dt>Test time</dt>
            <dd data-testid="clock-now">
              <Time at={clock.now} />
            </dd>
            <dt>Ahead of real time</dt>
            <dd data-testid="clock-offset">
              {spelled(clock.offset_seconds)} <span class="muted">({clock.offset_seconds} s)</span>
            </dd>
          </dl>
        )}
      </Show>
      <form class="clock" onSubmit={advance}>
        <label>
          Advance by{' '}
          <input
            name="advance-amount"
            type="number"
            min="0"
            step="any"
            required
            value={amount}
            onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
          />
        </label>{' '}
        <select aria-label="Unit" value={unit} onChange={(e) => setUnit((e.target as HTMLSelectElement).value as Unit)}>
          {Object.keys(UNITS).map((u) => (
            <option key={u} value={u}>
              {u}
            </option>
          ))}
        </select>{' '}
        <button type="submit" disabled={busy}>
          {busy ? 'Advancing…' : 'Advance'}
        </button>
        {error ? (
          <span class="error" role="alert">
            {' '}
            {error}
          </span>
        ) : null}
      </form>
      {advanced ? (
        <p data-testid="clock-advanced">
          Moved to <Time at={advanced.now} />.
        </p>
      ) : null}
      <p class="muted">
        The clock only moves forward. Charges waiting for their payer longer than the payer timeout, by this clock, fail
        with payment_expired once it has moved.
      </p>
    </section>
  )
}

/** The overrides a form gives: empty fields are left out; metadata is `key=value, key=value`. */
function overridesOf(form: Record<string, string>, allowed: string[]): ScenarioOverrides {
  const o: Record<string, unknown> = {}
  for (const name of allowed) {
    const value = form[name]?.trim()
    if (!value) continue
    if (name === 'amount') o.amount = Number(value)
    else if (name === 'metadata') {
      o.metadata = Object.fromEntries(
        value.split(',').map((pair) => {
          const at = pair.indexOf('=')
          if (at <= 0) throw new Error(`metadata takes key=value pairs, not '${pair.trim()}'`)
          return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()]
        }),
      )
    } else if (name === 'customer' && value.startsWith('{')) o.customer = JSON.parse(value)
    else o[name] = value
  }
  return o as ScenarioOverrides
}

const PLACEHOLDERS: Record<string, string> = {
  amount: '1000',
  currency: 'usd',
  metadata: 'order=A-17, channel=web',
  customer: 'cus_… or {"email": "ann@example.com", "description": "Ann"}',
  decline_code: 'card_declined',
  notify: 'https://example.com/hooks',
}

/** What a run made: a line per object, the charges linking to their pages. */
function Made({ run }: { run: ScenarioRun }) {
  const o = run.objects
  return (
    <table class="made" data-testid="scenario-made">
      <tbody>
        {o.customer ? (
          <tr>
            <th>customer</th>
            <td>
              <Id id={o.customer.id ?? ''} />
            </td>
          </tr>
        ) : null}
        {o.source ? (
          <tr>
            <th>source</th>
            <td>
              <Id id={o.source.id} />
            </td>
          </tr>
        ) : null}
        {[o.linking_charge, o.charge].map((c, i) =>
          c ? (
            <tr key={c.id}>
              <th>{i === 0 ? 'linking charge' : 'charge'}</th>
              <td>
                <ChargeLink id={c.id} /> <Status status={c.status} />
                {c.failure_data ? <span class="muted"> {c.failure_data.code}</span> : null}
              </td>
            </tr>
          ) : null,
        )}
        {o.refund ? (
          <tr>
            <th>refund</th>
            <td>
              <Id id={o.refund.id} />
            </td>
          </tr>
        ) : null}
        {o.test_clock ? (
          <tr>
            <th>test clock</th>
            <td>{o.test_clock.now}</td>
          </tr>
        ) : null}
      </tbody>
    </table>
  )
}

function ScenarioForm({ client, scenarios }: { client: JackdawClient; scenarios: Scenario[] }) {
  const [name, setName] = useState(scenarios[0]?.name ?? '')
  const [fields, setFields] = useState<Record<string, string>>({})
  const [run, setRun] = useState<ScenarioRun>()
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const chosen = scenarios.find((s) => s.name === name)
  const submit = async (e: Event) => {
    e.preventDefault()
    if (!chosen) return
    setError(undefined)
    // a new run's error must not sit under the last run's results
    setRun(undefined)
    setBusy(true)
    try {
      const overrides = overridesOf(
        fields,
        chosen.overrides.map((o) => o.name),
      )
      setRun(await client.scenarios.run(chosen.name, overrides))
    } catch (err) {
      setError(describe(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="scenario" onSubmit={submit}>
      <label>
        Scenario{' '}
        <select name="scenario" value={name} onChange={(e) => setName((e.target as HTMLSelectElement).value)}>
          {scenarios.map((s) => (
            <option key={s.name} value={s.name}>
              {s.name}
            </option>
          ))}
        </select>
      </label>
      {chosen ? <p class="muted">{chosen.description}</p> : null}
      <fieldset class="overrides">
        {chosen?.overrides.map((o) => (
          <label key={o.name} title={o.description}>
            <span>{o.name}</span>
            <input
              name={`override-${o.name}`}
              inputMode={o.type === 'integer' ? 'numeric' : 'text'}
              placeholder={PLACEHOLDERS[o.name] ?? ''}
              value={fields[o.name] ?? ''}
              onInput={(e) => setFields({ ...fields, [o.name]: (e.target as HTMLInputElement).value })}
            />
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={busy}>
        {busy ? 'Running…' : 'Run'}
      </button>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {run ? <Made run={run} /> : null}
    </form>
  )
}

/** The scenarios: choose one, give its overrides, run it and see what it made. */
export function ScenariosView({ client }: { client: JackdawClient }) {
  const [loaded] = useLoad(() => client.scenarios.list(), [])
  return (
    <section>
      <header class="view-head">
        <h1>Scenarios</h1>
      </header>
      <p class="muted">
        A scenario runs a flow through the service as a client would, with its events and notify calls.
      </p>
      <Show loaded={loaded}>{(list) => <ScenarioForm client={client} scenarios={list.data} />}</Show>
    </section>
  )
}
