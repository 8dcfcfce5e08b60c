import { expect } from 'vitest'
import { ErrorEnvelope } from '../../src/schemas/common.js'
import type { Reply } from './app.js'
import { shapeProblems } from './shape.js'

const REQUEST_ID = /^req_[0-9a-f]{24}$/

/**
 * An answer in the one error envelope, shaped exactly as its schema says and carrying its
 * Request-Id, with this status and code, and this `param` when one is given.
 */
export function expectError(res: Reply, status: number, code: string, param?: string) {
  expect(res.status, res.text).toBe(status)
  expect(shapeProblems(ErrorEnvelope, res.body), res.text).toEqual([])
  expect(res.body.error.code, res.text).toBe(code)
  if (param !== undefined) expect(res.body.error.param, res.text).toBe(param)
  expect(res.headers['request-id']).toMatch(REQUEST_ID)
}

/**
 * A 422 in the one envelope whose detail points at the field `loc` (['body', 'card', 'name']),
 * with this code when one is given.
 */
export function expectRefused(res: Reply, loc: (string | number)[], code?: string) {
  expect(res.status, res.text).toBe(422)
  expect(shapeProblems(ErrorEnvelope, res.body), res.text).toEqual([])
  expect(res.body.error.type).toMatch(/^(invalid_request_error|card_error)$/)
  if (code !== undefined) expect(res.body.error.code).toBe(code)
  expect(res.body.error.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc)
}
