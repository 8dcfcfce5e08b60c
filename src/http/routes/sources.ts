import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, NoQuery, withErrors } from '../../schemas/common.js'
import { CreateSourceBody, Source } from '../../schemas/source.js'
import type { Services } from '../../services/index.js'
import { NotifyAllowList } from '../../services/notify-address.js'
import { sourceBodyViolations } from '../../services/sources.js'

/**
 * `notifyAllow`: the receivers the operator allows besides public addresses (the services' own
 * list), against which a refused body's notify address is checked too.
 */
export const sourceRoutes: FastifyPluginAsyncTypebox<{ services: Services; notifyAllow?: NotifyAllowList }> = async (
  app,
  { services, notifyAllow = NotifyAllowList.none },
) => {
  app.post(
    '/v2/sources/',
    {
      config: {
        auth: 'public',
        bodyRules: (body, livemode) => sourceBodyViolations(body, livemode, notifyAllow),
      },
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
