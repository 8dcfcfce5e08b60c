import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, NoQuery, withErrors } from '../../schemas/common.js'
import { CreateSourceBody, Source } from '../../schemas/source.js'
import type { Services } from '../../services/index.js'
import { sourceBodyViolations } from '../../services/sources.js'

export const sourceRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/v2/sources/',
    {
      config: { auth: 'public', bodyRules: sourceBodyViolations },
      schema: {
        tags: ['sources'],
        operationId: 'createSource',
        summary: 'Create a single-use source',
        description:
          'A public or secret key. Card sources need `card`; every other type needs `redirect`. The response never holds the card number or security code.',
        body: CreateSourceBody,
        response: withErrors({ 200: Source }),
      },
    },
    (req) => services.sources.create(req.caller, req.body, req.idempotencyClaim?.requestKey),
  )

  app.get(
    '/v2/sources/:src_id',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['sources'],
        operationId: 'retrieveSource',
        querystring: NoQuery,
        summary: 'Retrieve a source',
        params: IdParams('src_id', 'src_'),
        response: withErrors({ 200: Source }),
      },
    },
    (req) => services.sources.get(req.caller, req.params.src_id),
  )
}
