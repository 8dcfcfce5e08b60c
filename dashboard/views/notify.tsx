import type { Delivery } from '../../src/client/api.js'
import { RealTime } from './common.js'

/**
 * What comes next for a pending notify call. A worker that claims a call counts the attempt in
 * `attempt_count` at once but adds it to `attempts` only with its outcome, and meanwhile
 * `next_attempt_at` is the end of its lease (when another worker may take the call over, should
 * this one die), not an attempt anyone plans. So while more attempts are counted than recorded the
 * call is being attempted, and that is shown instead of the lease. (Should its worker have died,
 * the attempt is recorded as interrupted once the lease runs out, and the call is tried again.)
 */
export function NextAttempt({ d }: { d: Delivery }) {
  if (d.status !== 'pending') return null
  if (d.attempt_count > d.attempts.length) return <span class="in-progress">attempt in progress</span>
  return (
    <>
      next attempt <RealTime at={d.next_attempt_at} />
    </>
  )
}

export function answerOf(a: Delivery['attempts'][number]): string {
  return a.status_code !== null ? `HTTP ${a.status_code}` : String(a.error)
}
