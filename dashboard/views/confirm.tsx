import { useEffect, useRef, useState } from 'preact/hooks'
import { describe, ErrorNote } from './common.js'

/** What an action would do, in words, and the call that does it. */
export interface Plan {
  question: string
  run: () => Promise<unknown>
}

/**
 * A button for an action that cannot be undone (capture, void, refund): it asks in the page what
 * exactly will happen, and runs only on "Yes". In the page rather than window.confirm, so that the
 * question can be styled, read by a screen reader as part of the form, and answered by a test.
 * `plan` answers the question to ask, or why the form cannot be acted on as it stands.
 */
export function ConfirmAction({
  label,
  plan,
  danger,
  resetOn,
}: {
  label: string
  plan: () => Plan | string
  danger?: boolean
  /** the form's values: a question asked before one changed would no longer say what "Yes" does */
  resetOn?: string
}) {
  const [question, setQuestion] = useState<{ plan: Plan; resetOn: string | undefined }>()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const cancel = useRef<HTMLButtonElement>(null)
  // decided as the page is drawn, not in an effect after it: a click that comes between a change
  // and an effect would otherwise meet a question that is about to vanish, or one that is stale
  const asked = question && question.resetOn === resetOn ? question.plan : undefined
  const setAsked = (plan: Plan | undefined) => setQuestion(plan ? { plan, resetOn } : undefined)
  // the button pressed is gone: the keyboard's focus goes to the safe answer, not to the page
  useEffect(() => {
    if (asked) cancel.current?.focus()
  }, [asked])
  const ask = () => {
    const p = plan()
    setError(typeof p === 'string' ? p : undefined)
    setAsked(typeof p === 'string' ? undefined : p)
  }
  const confirm = async () => {
    if (!asked) return
    setBusy(true)
    try {
      await asked.run()
    } catch (err) {
      setError(describe(err))
    } finally {
      setBusy(false)
      setAsked(undefined)
    }
  }
  const verb = label.toLowerCase()
  return (
    <div class="action">
      {asked ? (
        <fieldset class="confirm" aria-label={`Confirm: ${verb}`}>
          <span data-testid="confirm-question">{asked.question}</span>
          <button type="button" class={danger ? 'danger' : ''} disabled={busy} onClick={confirm}>
            {busy ? `${label}…` : `Yes, ${verb}`}
          </button>
          <button type="button" ref={cancel} disabled={busy} onClick={() => setAsked(undefined)}>
            Cancel
          </button>
        </fieldset>
      ) : (
        <button type="button" class={danger ? 'danger' : ''} disabled={busy} onClick={ask}>
          {busy ? `${label}…` : label}
        </button>
      )}
      <ErrorNote error={error} />
    </div>
  )
}
