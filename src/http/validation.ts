import { createRequire } from 'node:module'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import { AppError, type ErrorCode, problemsMessage, type ValidationDetail } from '../errors.js'

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

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** NUL (which PostgreSQL cannot store in text or jsonb) or a lone UTF-16 surrogate (not Unicode text). */
const unstorableText = (text: string) => text.includes('\u0000') || LONE_SURROGATE.test(text)

const pointerPart = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * Values no schema keyword can refuse but the store cannot keep: text holding NUL or a lone
 * surrogate (in a value or a key), and numbers that JSON cannot carry (`1e999` parses to Infinity).
 * Without this check such input reaches the database and fails there, as a 500.
 */
function unstorable(data: unknown): ErrorObject[] {
  const problems: ErrorObject[] = []
  const problem = (instancePath: string, keyword: string, message: string) =>
    problems.push({ instancePath, schemaPath: '#', keyword, params: {}, message })
  // iterative: a deeply nested body must not exhaust the stack
  const stack: [unknown, string][] = [[data, '']]
  while (stack.length > 0) {
    const [value, path] = stack.pop() as [unknown, string]
    if (typeof value === 'string') {
      if (unstorableText(value)) problem(path, 'text', 'must not contain NUL characters or unpaired surrogates')
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) problem(path, 'finite', 'must be a finite number')
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`])
    } else if (value !== null && typeof value === 'object') {
      for (const [key, v] of Object.entries(value).reverse()) {
        const at = `${path}/${pointerPart(key)}`
        if (unstorableText(key)) problem(at, 'text', 'is a field name holding NUL characters or unpaired surrogates')
        stack.push([v, at])
      }
    }
  }
  return problems
}

/** A problem with where it is in the request: an array's index as a number, a key as text. */
type Located = ErrorObject & { parts?: (string | number)[] }

/**
 * The parts of a JSON pointer into `data`: only an array's index is a number, so that a key of
 * digits (`"007"`, or a card number sent as a metadata key) stays the text it was, and is named,
 * and redacted, as text.
 */
function pathParts(data: unknown, pointer: string): (string | number)[] {
  const parts: (string | number)[] = []
  let at = data
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    const inArray = Array.isArray(at)
    parts.push(inArray ? Number(key) : key)
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined
  }
  return parts
}

const DECIMAL = /^-?\d+(\.\d+)?$/

/**
 * The fields of text that JavaScript reads as a number not written in decimal digits (`0x10`,
 * `1e1`, ` 16`), which Ajv would convert; undefined when there are none, as in nearly every request.
 * A number past JSON's range is unstorable's to name.
 */
function nonDecimalNumbers(data: unknown): string[] | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const found = Object.keys(data).filter((k) => {
    const v = (data as Record<string, unknown>)[k]
    return typeof v === 'string' && !DECIMAL.test(v) && Number.isFinite(Number(v))
  })
  return found.length > 0 ? found : undefined
}

/** Of the fields nonDecimalNumbers found, those Ajv converted: a number the schema asked for. */
function undecimal(fields: string[], data: unknown): ErrorObject[] {
  const converted = data as Record<string, unknown>
  return fields
    .filter((k) => typeof converted[k] === 'number')
    .map((k) => ({
      instancePath: `/${pointerPart(k)}`,
      schemaPath: '#',
      keyword: 'type',
      params: {},
      message: Number.isInteger(converted[k]) ? 'must be an integer in decimal digits' : 'must be a decimal number',
    }))
}

/**
 * Bodies are JSON and keep their types; query strings, params and headers are text to convert.
 * A schema is compiled at its first request, as serializers are (serialization.ts), and once per
 * process: Ajv keeps what it compiled by schema.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  let validate: ValidateFunction | undefined
  const isText = httpPart !== 'body'
  const checked = (data: unknown): boolean => {
    validate ??= (isText ? textAjv : bodyAjv).compile(schema)
    const suspects = isText ? nonDecimalNumbers(data) : undefined
    const valid = validate(data) as boolean
    const problems = suspects ? [...unstorable(data), ...undecimal(suspects, data)] : unstorable(data)
    const errors = problems.length > 0 ? [...(validate.errors ?? []), ...problems] : validate.errors
    for (const e of errors ?? []) (e as Located).parts = pathParts(data, e.instancePath)
    checked.errors = errors
    return valid && problems.length === 0
  }
  checked.errors = null as ErrorObject[] | null | undefined
  return checked
}

const CODE_OF_KEYWORD: Record<string, ErrorCode> = {
  required: 'parameter_missing',
  additionalProperties: 'parameter_unknown',
}

/** Where a problem is, named as `loc` names it: Fastify's names for the parts of a request are not. */
const LOC_OF_PART: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' }

function locOf(part: string, e: Located): (string | number)[] {
  const path = [...(e.parts ?? pathParts(undefined, e.instancePath))]
  if (e.keyword === 'required') path.push(String(e.params.missingProperty))
  if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty))
  // a propertyNames violation is about one key of the object: point at that key
  const key = (e as { propertyName?: string }).propertyName
  if (key !== undefined) path.push(key)
  return [LOC_OF_PART[part] ?? part, ...path]
}

function messageOf(e: ErrorObject, name: string): string {
  if ((e as { propertyName?: string }).propertyName !== undefined) {
    if (e.keyword === 'maxLength') return `${name}: a key must be at most ${e.params.limit} characters`
    if (e.keyword === 'minLength') return `${name}: a key must be at least ${e.params.limit} characters`
    return `${name}: the key is not allowed`
  }
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

/**
 * The problems of the one branch of a union whose type the value has (an object given for a
 * string or an object): they say what is wrong with it, where the union's own entry says only
 * that no branch matched. Undefined when no branch, or more than one, has the value's type.
 */
function branchOfType(union: ErrorObject, errors: ErrorObject[]): ErrorObject[] | undefined {
  const prefix = `${union.schemaPath.replace(/\/anyOf$/, '')}/anyOf/`
  const branches = new Map<string, ErrorObject[]>()
  for (const e of errors) {
    if (!e.schemaPath.startsWith(prefix) || !e.instancePath.startsWith(union.instancePath)) continue
    const branch = e.schemaPath.slice(prefix.length).split('/')[0] as string
    branches.set(branch, [...(branches.get(branch) ?? []), e])
  }
  const typed = [...branches.values()].filter(
    (found) => !found.some((e) => e.keyword === 'type' && e.instancePath === union.instancePath),
  )
  return typed.length === 1 ? typed[0] : undefined
}

/** Turns schema violations into one 422 that lists each, in the envelope of the error catalog. */
export function validationError(part: string, errors: ErrorObject[]): AppError {
  // a union reports each branch it tried; its own entry says enough, unless the value has the type
  // of one branch only, whose problems say more. A propertyNames violation comes with the entry of
  // the key rule it broke, which says more; so does an enumeration's entry, which names its values,
  // beside the entry of its type.
  const enumerated = new Set(errors.filter((e) => e.keyword === 'enum').map((e) => e.instancePath))
  const explained = new Map(errors.filter((e) => e.keyword === 'anyOf').map((e) => [e, branchOfType(e, errors)]))
  const chosen = new Set([...explained.values()].flatMap((found) => found ?? []))
  const useful = errors.filter((e) => {
    if (e.keyword === 'propertyNames') return false
    if (e.keyword === 'type' && enumerated.has(e.instancePath)) return false
    if (e.keyword === 'anyOf') return !explained.get(e)
    return !e.schemaPath.includes('/anyOf/') || chosen.has(e)
  })
  const list = useful.length > 0 ? useful : errors
  const detail: ValidationDetail[] = list.map((e) => {
    const loc = locOf(part, e)
    const name = loc.slice(loc.length > 1 ? 1 : 0).join('.')
    return { loc, msg: messageOf(e, name), type: e.keyword }
  })
  const first = list[0] as ErrorObject
  const firstLoc = (detail[0] as ValidationDetail).loc
  const param = firstLoc.slice(firstLoc.length > 1 ? 1 : 0).join('.')
  const code = CODE_OF_KEYWORD[first.keyword] ?? 'parameter_invalid'
  return new AppError(code, problemsMessage(detail), { param, detail })
}
