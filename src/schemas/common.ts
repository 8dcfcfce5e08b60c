import { type Static, type TSchema, type TString, Type } from 'typebox'

/**
 * Pattern P, as the interface writes it. Validated without the unicode flag, where `\'` is legal;
 * the OpenAPI document carries this same text.
 */
export const PATTERN_P = "^[A-Za-z0-9\\s\\'#_\\.\\-,]+$"

/** One of `values`: declared a string as well, so that the OpenAPI document types it. */
export const StringEnum = <const T extends string[]>(values: [...T], options: { description?: string } = {}) =>
  Type.Enum(values, { ...options, type: 'string' })

export const TextP = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, pattern: PATTERN_P, ...(description ? { description } : {}) })

export const Timestamp = Type.String({
  description: 'ISO 8601 time in UTC with microseconds, e.g. 2026-11-21T10:15:30.123456Z',
})

const MetadataValue = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()])

/**
 * An object of any keys, each value `value`. Not a Record: its keys become
 * `patternProperties: {"^.*$": …}`, and `.` stops at a line break, so a key holding one would be
 * neither checked on the way in nor written on the way out.
 */
export const AnyKeys = <T extends TSchema>(value: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, ...options })

export const Metadata = AnyKeys(MetadataValue, {
  maxProperties: 50,
  propertyNames: { type: 'string', minLength: 1, maxLength: 40 },
  description:
    'Key-value pairs: at most 50 keys of 1-40 characters; values are strings (at most 500 characters), numbers or booleans.',
})

/** In responses metadata is passed through as stored. */
export const MetadataOut = AnyKeys(MetadataValue)

export const ErrorDetail = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String(),
})

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      type: Type.String(),
      code: Type.String(),
      message: Type.String(),
      param: Type.Optional(Type.String()),
      detail: Type.Optional(Type.Array(ErrorDetail)),
    }),
  },
  { description: 'The one error envelope' },
)

export const ListQuery = Type.Object(
  {
    // unbounded: any string that names no object of the list is the documented 400, not a 422
    start_after: Type.Optional(Type.String({ description: 'An id: the page holds the objects after it' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, default 20' })),
  },
  { additionalProperties: false },
)

/** The query of a list with filters of its own besides the paging parameters. */
export function ListQueryWith<P extends Record<string, TSchema>>(filters: P) {
  return Type.Object({ ...ListQuery.properties, ...filters }, { additionalProperties: false })
}

export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({
    object: Type.Literal('list'),
    next: Type.Union([Type.String(), Type.Null()], {
      description: 'Relative path of the next page, or null on the last page',
    }),
    data: Type.Array(item),
  })
}

export const IdParams = <K extends string>(name: K, prefix: string) =>
  Type.Object({
    // unbounded (the router caps a path parameter's length): an id that names nothing is a 404
    [name]: Type.String({ description: `an id (${prefix}…)` }),
  } as Record<K, TString>)

/** The body of an operation that takes no fields: none at all, or `{}`; any field is a 422. */
export const NoBody = Type.Object({}, { additionalProperties: false })

/** The query of an operation that takes none: any parameter is a 422, so a typo never passes silently. */
export const NoQuery = Type.Object({}, { additionalProperties: false })

/** The error responses every route can give, so the OpenAPI document shows them. */
export function withErrors<R extends Record<number, TSchema>>(ok: R) {
  return { ...ok, '4xx': ErrorEnvelope, '5xx': ErrorEnvelope }
}
