import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { OfChargeQuery } from '../../schemas/charge.js'
import { IdParams, ListOf, NoQuery, withErrors } from '../../schemas/common.js'
import { Event } from '../../schemas/event.js'
import type { Services } from '../../services/index.js'
import { pageOf } from '../lists.js'

const tags = ['events']

export const eventRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/v2/events/',
    {
      schema: {
        tags,
        operationId: 'listEvents',
        summary: 'List events, newest first',
        description: 'With `charge`, only the events of that charge.',
        querystring: OfChargeQuery,
        response: withErrors({ 200: ListOf(Event) }),
      },
    },
    (req) =>
      pageOf('/v2/events/', req.query, (page) => services.events.list(req.caller, page, req.query.charge), {
        charge: req.query.charge,
      }),
  )
  app.get(
    '/v2/events/:evt_id',
    {
      schema: {
        tags,
        operationId: 'retrieveEvent',
        querystring: NoQuery,
        summary: 'Retrieve an event',
        params: IdParams('evt_id', 'evt_'),
        response: withErrors({ 200: Event }),
      },
    },
    (req) => services.events.get(req.caller, req.params.evt_id),
  )
}
