import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, preValidationHookHandler } from 'fastify'
import { DOCS_CSP, DOCS_PREFIX } from './headers.js'

interface OpenApiOperation {
  parameters?: Record<string, unknown>[]
  requestBody?: { required?: boolean }
  responses?: Record<string, { headers?: Record<string, unknown> }>
}
type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation>> } & Record<string, unknown>

/**
 * What the route schemas cannot say: which bodies may be left out, the Idempotency-Key every POST
 * takes, and the Request-Id on every answer.
 */
function describeHeaders(doc: OpenApiDocument, optionalBodies: ReadonlySet<string>): OpenApiDocument {
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(operations)) {
      if (op.requestBody && optionalBodies.has(`${method} ${path}`)) op.requestBody.required = false
      // accounts are made by the operator's token, outside any account's idempotency keys
      if (method === 'post' && path.startsWith('/v2/') && !path.startsWith('/v2/hosted/') && path !== '/v2/accounts') {
        op.parameters = [
          ...(op.parameters ?? []),
          {
            in: 'header',
            name: 'Idempotency-Key',
            required: false,
            description:
              'Makes a retry safe: the first request with a key runs, a retry gets its answer again (docs/api.md). X-Idempotency-Key is the same header.',
            schema: { type: 'string', minLength: 1, maxLength: 255 },
          },
        ]
      }
      for (const response of Object.values(op.responses ?? {})) {
        response.headers = {
          ...response.headers,
          'Request-Id': { description: 'The id of this request, for support', schema: { type: 'string' } },
        }
      }
    }
  }
  return doc
}

/**
 * The OpenAPI document (/v2/openapi.json) and its reference page (DOCS_PREFIX), built from the
 * schemas of the routes registered after this. Routes whose config says `bodyOptional` are also
 * made to take no body at all, and the document says so: the one hook that sees every route
 * does both, so the two cannot disagree.
 */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  // operations whose body may be left out, as the OpenAPI document's paths name them
  const optionalBodies = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (!(route.config as { bodyOptional?: boolean } | undefined)?.bodyOptional) return
    for (const method of [route.method].flat()) {
      optionalBodies.add(`${method.toLowerCase()} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
    }
    // such an operation may be called with no body at all
    const emptyBody: preValidationHookHandler = (request, _reply, done) => {
      if (request.body === undefined) request.body = {}
      done()
    }
    route.preValidation = [route.preValidation ?? []].flat().concat(emptyBody)
  })
  await app.register(swagger, {
    transformObject: (doc) =>
      'openapiObject' in doc
        ? describeHeaders(doc.openapiObject as OpenApiDocument, optionalBodies)
        : doc.swaggerObject,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Jackdaw payment API',
        version: '2',
        description:
          'Charges, customers and single-use payment sources, in live and test mode. See docs/api.md for the rules behind each operation.',
      },
      components: {
        securitySchemes: {
          basicAuth: { type: 'http', scheme: 'basic', description: 'The API key as user name, empty password' },
          bearerAuth: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ basicAuth: [] }, { bearerAuth: [] }],
    },
  })
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX, logLevel: 'warn', staticCSP: DOCS_CSP })
  app.get('/v2/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger())
}
