import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { OfChargeQuery } from '../../schemas/charge.js'
import { IdParams, ListOf, NoBody, NoQuery, withErrors } from '../../schemas/common.js'
import { Delivery } from '../../schemas/delivery.js'
import type { Services } from '../../services/index.js'
import { pageOf } from '../lists.js'

const Params = IdParams('dlv_id', 'dlv_')
const tags = ['deliveries']

export const deliveryRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const deliveries = services.deliveries

  app.get(
    '/v2/deliveries/',
    {
      schema: {
        tags,
        operationId: 'listDeliveries',
        summary: 'List notify call deliveries, newest first, each with its attempts',
        description: "With `charge`, only the deliveries of that charge's events.",
        querystring: OfChargeQuery,
        response: withErrors({ 200: ListOf(Delivery) }),
      },
    },
    (req) =>
      pageOf('/v2/deliveries/', req.query, (page) => deliveries.list(req.caller, page, req.query.charge), {
        charge: req.query.charge,
      }),
  )

  app.get(
    '/v2/deliveries/:dlv_id',
    {
      schema: {
        tags,
        operationId: 'retrieveDelivery',
        querystring: NoQuery,
        summary: 'Retrieve a delivery with its attempts',
        params: Params,
        response: withErrors({ 200: Delivery }),
      },
    },
    (req) => deliveries.get(req.caller, req.params.dlv_id),
  )

  app.post(
    '/v2/deliveries/:dlv_id/redeliver',
    {
      config: { bodyOptional: true },
      schema: {
        tags,
        operationId: 'redeliverDelivery',
        summary: 'Send a failed delivery once more',
        description:
          'Queues one more attempt, due at once; the answer shows the delivery pending. If that attempt fails the delivery is failed again, with no further schedule. Only a failed delivery can be redelivered (400 delivery_not_failed otherwise).',
        params: Params,
        body: NoBody,
        response: withErrors({ 200: Delivery }),
      },
    },
    (req) => deliveries.redeliver(req.caller, req.params.dlv_id, req.idempotencyClaim?.requestKey),
  )
}
