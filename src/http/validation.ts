import { createRequire } from 'node:module'
import { Ajv, type ErrorObject } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import { AppError, type ErrorCode, type ValidationDetail } from '../errors.js'

// ajv-formats is CommonJS whose default export TypeScript cannot see through NodeNext interop
const addFormats = createRequire(import.meta.url)('ajv-formats') as typeof import('ajv-formats').default

function makeAjv(coerceTypes: boolean) {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    // unknown fields are refused, never stripped, so a typo does not pass silently
    removeAdditional: false,
    // pattern P contains `\'`, legal only without the unicode flag
    unicodeRegExp: false,
    strict: false,
  })
  addFormats(ajv)
  return ajv
}

const bodyAjv = makeAjv(false)
const textAjv = makeAjv(true)

/** Bodies are JSON and keep their types; query strings, params and headers are text to convert. */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema)

const CODE_OF_KEYWORD: Record<string, ErrorCode> = {
  required: 'parameter_missing',
  additionalProperties: 'parameter_unknown',
}

function locOf(part: string, e: ErrorObject): (string | number)[] {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')))
  if (e.keyword === 'required') path.push(String(e.params.missingProperty))
  if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty))
  return [part, ...path]
}

function messageOf(e: ErrorObject, name: string): string {
  switch (e.keyword) {
    case 'required':
      return `${name} is required`
    case 'additionalProperties':
      return `${name} is not a known field`
    case 'maxLength':
      return `${name} must be at most ${e.params.limit} characters`
    case 'minLength':
      return `${name} must be at least ${e.params.limit} characters`
    case 'pattern':
      return `${name} has characters or a form that are not allowed`
    case 'enum':
      return `${name} must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`
    default:
      return `${name} ${e.message ?? 'is invalid'}`
  }
}

/** Turns schema violations into one 422 that lists each, in the envelope of the error catalog. */
export function validationError(part: string, errors: ErrorObject[]): AppError {
  // a union reports each branch it tried; its own entry says enough
  const useful = errors.filter((e) => !e.schemaPath.includes('/anyOf/'))
  const list = useful.length > 0 ? useful : errors
  const detail: ValidationDetail[] = list.map((e) => {
    const loc = locOf(part, e)
    const name = loc.length > 1 ? loc.slice(1).join('.') : part
    return { loc, msg: messageOf(e, name), type: e.keyword }
  })
  const first = list[0] as ErrorObject
  const firstLoc = (detail[0] as ValidationDetail).loc
  const param = firstLoc.length > 1 ? firstLoc.slice(1).join('.') : part
  const code = CODE_OF_KEYWORD[first.keyword] ?? 'parameter_invalid'
  const message =
    detail.length === 1
      ? (detail[0] as ValidationDetail).msg
      : `${detail.length} problems: ${detail.map((d) => d.msg).join('; ')}`
  return new AppError(code, message, { param, detail })
}
