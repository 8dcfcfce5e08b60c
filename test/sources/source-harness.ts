import { expect } from 'vitest'
import { Source } from '../../src/schemas/source.js'
import { type Client, REDIRECT, type Reply, TEST_CARD, type TestApp } from '../helpers/app.js'
import { shapeProblems } from '../helpers/shape.js'

/**
 * What the source tests share: request bodies of each kind, a field of one set at a path, and the
 * check every created source must pass.
 */

export type Json = Record<string, unknown>
export type Path = string[]

export const thisYear = new Date().getUTCFullYear()
export const thisMonth = new Date().getUTCMonth() + 1

const clone = <T>(v: T): T => structuredClone(v)

export function at(obj: unknown, path: Path): unknown {
  let cur = obj
  for (const key of path) cur = (cur as Json | undefined)?.[key]
  return cur
}

export function withValue(body: Json, path: Path, value: unknown): Json {
  const copy = clone(body)
  let cur = copy
  for (const key of path.slice(0, -1)) {
    cur[key] ??= {}
    cur = cur[key] as Json
  }
  cur[path[path.length - 1] as string] = value
  return copy
}

export function without(body: Json, path: Path): Json {
  const copy = clone(body)
  const parent = at(copy, path.slice(0, -1)) as Json
  delete parent[path[path.length - 1] as string]
  return copy
}

/** A string of exactly n characters, all allowed by pattern P, mixing its character classes. */
export function textP(n: number): string {
  const filler = "Ann O'Neil-Lee, 5th #2_b. "
  return filler.repeat(Math.ceil(n / filler.length) + 1).slice(0, n)
}

/** A card number of `length` digits that passes the Luhn check. */
export function luhnNumber(prefix: string, length: number): string {
  const body = prefix.padEnd(length - 1, '0')
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i])
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return body + String((10 - (sum % 10)) % 10)
}

export const cardBody = (): Json => ({ type: 'card', card: { ...TEST_CARD } })
export const walletBody = (type = 'wallet_a'): Json => ({ type, redirect: { ...REDIRECT } })
export const ownerBody = (): Json => ({
  ...cardBody(),
  owner: { billing: { name: 'Ann Lee' }, shipping: { name: 'Ann Lee' } },
})

/** POST /v2/sources/ on the app `app()` gives when it runs, with its test secret key unless told. */
export function sourceCreate(app: () => TestApp) {
  return (body: unknown, c: Client = app().sk) => c.post('/v2/sources/', body)
}

/** A source created: 200, shaped exactly as its schema says. */
export function expectOk(res: Reply) {
  expect(res.status, res.text).toBe(200)
  expect(res.body.object).toBe('source')
  expect(shapeProblems(Source, res.body)).toEqual([])
}
