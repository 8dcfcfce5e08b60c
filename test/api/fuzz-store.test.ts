import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { keptKey, type TestApp } from '../helpers/app.js'
import { mutatedBody } from '../helpers/fuzz-mutations.js'
import { bodyText, headersFor, keyArb, urlArb, withToken } from '../helpers/fuzz-requests.js'
import { MUTATING_ROUTES, type Route } from '../helpers/fuzz-routes.js'
import { toText } from '../helpers/fuzz-values.js'
import { makeFixtures } from './fuzz-fixtures.js'
import { checkAnswer, fail, params, type Req, type Res, runs, send, TIMEOUT, t, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing refused mutations (see fuzz-harness.ts for the properties and the environment): a
 * 4xx answer leaves every table of the store as it was, but for the documented exceptions.
 */

useFuzzApp()

// ---------------------------------------------------------------------------------------------
// The store: every table, counted and hashed
// ---------------------------------------------------------------------------------------------

interface TableState {
  count: number
  hash: string
  rows: string[]
}
type Snapshot = Map<string, TableState>

async function snapshot(t: TestApp): Promise<Snapshot> {
  const tables = await t.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
  )
  const out: Snapshot = new Map()
  for (const { table_name } of tables.rows) {
    const r = await t.db.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${table_name}" x ORDER BY 1`)
    const rows = r.rows.map((x) => x.j)
    out.set(table_name, { count: rows.length, hash: createHash('sha256').update(rows.join('\n')).digest('hex'), rows })
  }
  return out
}

function rowsDiff(before: TableState | undefined, after: TableState | undefined) {
  const b = new Set(before?.rows ?? [])
  const a = new Set(after?.rows ?? [])
  return { removed: [...b].filter((r) => !a.has(r)), added: [...a].filter((r) => !b.has(r)) }
}

/**
 * What a refused request may change, and nothing else:
 * - idempotency_keys: a request with an Idempotency-Key that passed validation claims the key
 *   before its handler runs, and the handler's 4xx answer is then kept, so that a retry gets the
 *   same answer (src/http/idempotency.ts; only 5xx answers release the key). So one added row
 *   for exactly that key, holding exactly that status and body (sealed), is allowed; nothing else.
 * - charges: a wrong OTP (400 otp_invalid) counts the attempt on the charge (docs/testing.md:
 *   "the third wrong OTP fails it"), so that charge's otp_attempts may go up by one, with its
 *   updated_at; no other column, no other row.
 */
function unexpectedChanges(req: Req, res: Res, before: Snapshot, after: Snapshot): string[] {
  const problems: string[] = []
  const code = res.headers['content-type']?.toString().startsWith('application/json')
    ? (JSON.parse(res.body) as { error?: { code?: string } }).error?.code
    : undefined
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const b = before.get(table)
    const a = after.get(table)
    if (b && a && b.count === a.count && b.hash === a.hash) continue
    const { removed, added } = rowsDiff(b, a)
    if (table === 'idempotency_keys') {
      const key = req.headers['idempotency-key']
      const row = added.length === 1 ? (JSON.parse(added[0] as string) as Record<string, unknown>) : undefined
      if (
        removed.length === 0 &&
        row &&
        key !== undefined &&
        // a public key's holders' keys are kept apart from the secret key's
        (row.key === keptKey(t, String(key)) || row.key === keptKey(t, String(key), 'public')) &&
        row.status_code === res.statusCode &&
        // the answer is kept sealed
        t.vault.decrypt(String(row.response_body)) === res.body
      ) {
        continue
      }
    }
    if (table === 'charges' && code === 'otp_invalid' && removed.length === 1 && added.length === 1) {
      const was = JSON.parse(removed[0] as string) as Record<string, unknown>
      const is = JSON.parse(added[0] as string) as Record<string, unknown>
      const rest = (r: Record<string, unknown>) => JSON.stringify({ ...r, otp_attempts: 0, updated_at: '' })
      if (rest(was) === rest(is) && (is.otp_attempts as number) === (was.otp_attempts as number) + 1) continue
    }
    problems.push(
      `${table}: ${b?.count} -> ${a?.count} rows\n  removed: ${removed.join('\n    ')}\n  added: ${added.join('\n    ')}`,
    )
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// 3. A refused request leaves the store as it was
// ---------------------------------------------------------------------------------------------

describe('fuzz: refused requests leave the store unchanged', () => {
  it(
    'every 4xx mutation leaves every table, counted and hashed, as it was',
    async () => {
      // objects of its own, in every state, whatever the properties before did to theirs
      const f = await makeFixtures(t)
      // mostly none; fresh keys (claimed, then the handler refuses); a few reused or invalid ones
      const idempotencyKey = fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 3, arbitrary: fc.uuid() },
        { weight: 1, arbitrary: fc.constantFrom('idem-1', 'idem-2', 'a'.repeat(256), '') },
      )
      const method = (route: Route) =>
        fc.oneof(
          { weight: 9, arbitrary: fc.constant(route.method as string) },
          { weight: 1, arbitrary: fc.constant('PATCH') },
        )
      const req = fc.constantFrom(...MUTATING_ROUTES).chain((route) =>
        fc
          .record({
            method: method(route),
            url: urlArb(f, route),
            key: fc.oneof(
              { weight: 12, arbitrary: keyArb(f, route) },
              { weight: 1, arbitrary: fc.constant(undefined) },
              { weight: 1, arbitrary: fc.constant(f.keys.skLive) },
            ),
            body: route.body
              ? fc.oneof(
                  { weight: 3, arbitrary: route.body(f).map(toText) },
                  { weight: 3, arbitrary: mutatedBody(route.body(f)) },
                  { weight: 1, arbitrary: bodyText(f, route) },
                )
              : fc.option(fc.constantFrom('{}', '{"a":1}', '['), { nil: undefined }),
            idempotencyKey,
          })
          .map(({ method: m, url, key, body, idempotencyKey: ik }): Req => {
            const hosted = route.path.startsWith('/v2/hosted/')
            const h = hosted ? f.hosted.find((x) => url.endsWith(x.ch)) : undefined
            const headers = headersFor(key, body !== undefined ? { 'content-type': 'application/json' } : {})
            if (ik !== undefined && !hosted) headers['idempotency-key'] = ik
            const payload = hosted && h && body !== undefined ? withToken(body, h.token) : body
            return { method: m, url, headers, ...(payload !== undefined ? { payload } : {}) }
          }),
      )
      let refused = 0
      await fc.assert(
        fc.asyncProperty(req, async (r) => {
          const before = await snapshot(t)
          const res = await send(r)
          const after = await snapshot(t)
          if (res.statusCode >= 400 && res.statusCode < 500) {
            refused++
            const problems = unexpectedChanges(r, res, before, after)
            if (problems.length > 0) fail(r, res, `a refused request changed the store:\n${problems.join('\n')}`)
          }
          checkAnswer(r, res)
        }),
        params(300),
      )
      // the property means something only if most requests were refused
      expect(refused).toBeGreaterThan(runs(300) / 3)
    },
    TIMEOUT,
  )
})
