import { createHash } from 'node:crypto'
import { type IdKind, newId, seededId } from '../domain/ids.js'
import type { Queryable } from './db.js'
import type { Scope } from './scope.js'

// Each account's id seed, null for an account that has none: fixed when the account is made, so
// it is read once per process.
const seeds = new Map<string, string | null>()

/**
 * A new id for an object of `scope`. A deterministic account's test-mode ids come from its seed
 * and a counter kept in its row (every process counts on from the same place); any other id is
 * newId's, which stamps the real time even in test mode: an account's test clock only ever moves
 * forward, so its ids and its test-clock times sort alike, and an id stays unguessable.
 */
export async function makeId(db: Queryable, scope: Scope, kind: IdKind): Promise<string> {
  const next = await nextSeeded(db, scope)
  return next ? seededId(kind, next.seed, next.counter, next.ms) : newId(kind)
}

/**
 * A hosted-page token for a deterministic account's test-mode charge, from its seed and counter as
 * its ids are (48 hex, as a random token); undefined for any other, whose token is random.
 */
export async function seededToken(db: Queryable, scope: Scope): Promise<string | undefined> {
  const next = await nextSeeded(db, scope)
  if (!next) return undefined
  return createHash('sha256').update(`${next.seed}\u0000token\u0000${next.counter}`).digest('hex').slice(0, 48)
}

/** The account's seed with the next count and its test-clock time, when it is deterministic. */
async function nextSeeded(
  db: Queryable,
  scope: Scope,
): Promise<{ seed: string; counter: number; ms: number } | undefined> {
  if (scope.livemode) return undefined
  let seed = seeds.get(scope.accountId)
  if (seed === undefined) {
    const res = await db.query<{ id_seed: string | null }>('SELECT id_seed FROM accounts WHERE id = $1', [
      scope.accountId,
    ])
    seed = res.rows[0]?.id_seed ?? null
    if (seeds.size > 10_000) seeds.clear()
    seeds.set(scope.accountId, seed)
  }
  if (seed === null) return undefined
  const res = await db.query<{ counter: string; ms: string }>(
    `UPDATE accounts SET id_counter = id_counter + 1 WHERE id = $1
     RETURNING id_counter AS counter, floor(EXTRACT(EPOCH FROM account_now(id, false)) * 1000) AS ms`,
    [scope.accountId],
  )
  const row = res.rows[0]
  return row && { seed, counter: Number(row.counter), ms: Number(row.ms) }
}
