import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, preValidationHookHandler } from 'fastify'
import { FAULT_HEADER, FAULT_NAMES, MAX_FAULT_LATENCY_MS } from '../schemas/test-faults.js'
import { DOCS_CSP, DOCS_PREFIX } from './headers.js'
import { isHostedPath } from './hosted-page.js'

interface OpenApiOperation {
  parameters?: Record<string, unknown>[]
  requestBody?: { required?: boolean }
  responses?: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>
}
type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation>> } & Record<string, unknown>

/** The header that gives one test-mode request a fault, as every account operation takes it. */
const TEST_FAULT_PARAMETER = {
  in: 'header',
  name: FAULT_HEADER,
  required: false,
  description: `Test keys only (a live key is refused: 400 test_mode_only): the service acts out this fault for this request (docs/testing.md, Faults on demand). \`processor_latency=<ms>\` takes 0 to ${MAX_FAULT_LATENCY_MS} ms; anything else is 400 header_invalid.`,
  schema: {
    type: 'string',
    pattern: `^(${FAULT_NAMES.filter((n) => n !== 'processor_latency').join('|')}|processor_latency=\\d{1,5})$`,
  },
}

/** What each group of operations is, for the document's `tags`: a route's tag must be here. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  sources: 'Single-use payment sources: cards, wallets, a card scheme, bank transfer and QR',
  customers: 'Customers and the sources saved to them',
  charges: 'Charges: authorize, capture, void, refund, and the payer steps',
  events: 'What happened to the objects of an account, as a list and as a stream',
  deliveries: 'Notify calls to redirect.notify addresses, with every attempt',
  account: 'The account of the key, its webhook secret',
  'test-mode': 'Test keys only: the test clock, faults on demand, scenarios; and the operator accounts',
}

interface RouteNotes {
  /** the body may be left out */
  optionalBodies: Set<string>
  /** a Jackdaw-Test-Fault header is refused */
  refusingFaults: Set<string>
  /** the answer is a stream of server-sent events */
  streams: Set<string>
}

/**
 * What the route schemas cannot say: which bodies may be left out, the Idempotency-Key every POST
 * takes, the test-fault header every account operation takes, and the Request-Id on every answer.
 */
function describeHeaders(doc: OpenApiDocument, said: RouteNotes): OpenApiDocument {
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(operations)) {
      const operation = `${method} ${path}`
      if (op.requestBody && said.optionalBodies.has(operation)) op.requestBody.required = false
      // accounts are made by the operator's token, outside any account's idempotency keys
      const ofAccount = path.startsWith('/v2/') && !isHostedPath(path) && !path.startsWith('/v2/accounts')
      if (ofAccount && !said.refusingFaults.has(operation)) {
        op.parameters = [...(op.parameters ?? []), TEST_FAULT_PARAMETER]
      }
      const streamed = said.streams.has(operation) ? op.responses?.['200']?.content : undefined
      if (streamed?.['application/json']) {
        streamed['text/event-stream'] = streamed['application/json']
        delete streamed['application/json']
      }
      if (method === 'post' && ofAccount) {
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
  const used = new Set(
    Object.values(doc.paths ?? {}).flatMap((ops) =>
      Object.values(ops).flatMap((op) => (op as { tags?: string[] }).tags ?? []),
    ),
  )
  doc.tags = [...used].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? '' }))
  return doc
}

/**
 * The OpenAPI document (/v2/openapi.json) and its reference page (DOCS_PREFIX), built from the
 * schemas of the routes registered after this. Routes whose config says `bodyOptional` are also
 * made to take no body at all, and the document says so: the one hook that sees every route
 * does both, so the two cannot disagree.
 */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  // operations, as the OpenAPI document's paths name them, whose route config says more
  const said: RouteNotes = { optionalBodies: new Set(), refusingFaults: new Set(), streams: new Set() }
  app.addHook('onRoute', (route) => {
    const config = route.config as
      | { bodyOptional?: boolean; refusesTestFaults?: boolean; streams?: boolean }
      | undefined
    const operations = [route.method]
      .flat()
      .map((method) => `${method.toLowerCase()} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
    for (const operation of operations) {
      if (config?.refusesTestFaults) said.refusingFaults.add(operation)
      if (config?.streams) said.streams.add(operation)
      if (config?.bodyOptional) said.optionalBodies.add(operation)
    }
    if (!config?.bodyOptional) return
    // such an operation may be called with no body at all
    const emptyBody: preValidationHookHandler = (request, _reply, done) => {
      if (request.body === undefined) request.body = {}
      done()
    }
    route.preValidation = [route.preValidation ?? []].flat().concat(emptyBody)
  })
  await app.register(swagger, {
    transformObject: (doc) =>
      'openapiObject' in doc ? describeHeaders(doc.openapiObject as OpenApiDocument, said) : doc.swaggerObject,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Jackdaw payment API',
        version: '2',
        description:
          'Charges, customers and single-use payment sources, in live and test mode. See docs/api.md for the rules behind each operation.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      // the paths are the service's own, wherever it is reached
      servers: [{ url: '/' }],
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
