import fastJsonStringify from 'fast-json-stringify'
import type { FastifySerializerCompiler } from 'fastify/types/schema.js'

type Serializer = (data: unknown) => string

/**
 * Response serializers, compiled at a schema's first answer and once for the whole process:
 * compiling every route's schemas is most of the cost of building an app, and a process that
 * builds one for each test file, or each test (jackdaw/testing), answers from a few routes only.
 * The response schemas are module constants, shared by every app built in the process.
 */
const compiled = new WeakMap<object, Serializer>()

export const serializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  let serialize = compiled.get(schema)
  return (data: unknown) => {
    if (!serialize) {
      serialize = compiled.get(schema) ?? (fastJsonStringify(schema as never) as Serializer)
      compiled.set(schema, serialize)
    }
    return serialize(data)
  }
}
