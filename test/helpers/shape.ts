import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'

/**
 * A response schema closed at every level: the schemas the routes serialize with leave objects
 * open, and the serializer drops undeclared fields; a shape check wants any field the schema does
 * not declare reported.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed)
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) out[k] = closed(v)
  if (out.type === 'object' && out.properties !== undefined && out.additionalProperties === undefined) {
    out.additionalProperties = false
  }
  return out
}

const closedSchemas = new WeakMap<TSchema, TSchema>()

/**
 * How `value` departs from `schema` (a response schema of src/schemas), closed: one line per
 * problem, with its path; empty when it fits exactly.
 */
export function shapeProblems(schema: TSchema, value: unknown): string[] {
  let exact = closedSchemas.get(schema)
  if (!exact) {
    exact = closed(schema) as TSchema
    closedSchemas.set(schema, exact)
  }
  if (Value.Check(exact, value)) return []
  return [...Value.Errors(exact, value)].map((e) => `${e.instancePath || '/'} ${e.message}`)
}
