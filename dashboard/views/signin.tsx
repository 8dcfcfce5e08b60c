import { useState } from 'preact/hooks'
import { describe } from './common.js'

export function SignIn({ onSignIn }: { onSignIn: (key: string) => Promise<void> }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    if (!/^sk_(test|live)_/.test(key.trim())) {
      setError('Use a secret key (sk_test_… or sk_live_…): the dashboard reads what only a secret key may.')
      return
    }
    setBusy(true)
    try {
      await onSignIn(key.trim())
    } catch (err) {
      setError(describe(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="signin">
      <h1>Jackdaw</h1>
      <form onSubmit={submit}>
        <label for="key">Secret key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="sk_test_…"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <p class="muted">
          The key stays in this tab only, and is forgotten when the tab closes. A test key shows test mode, a live key
          live mode.
        </p>
      </form>
    </main>
  )
}
