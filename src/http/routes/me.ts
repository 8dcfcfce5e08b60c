import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Account, WebhookSecret } from '../../schemas/account.js'
import { NoBody, NoQuery, withErrors } from '../../schemas/common.js'
import type { Services } from '../../services/index.js'

export const meRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/v2/me',
    {
      schema: {
        tags: ['account'],
        operationId: 'retrieveAccount',
        querystring: NoQuery,
        summary: 'The account of the key',
        response: withErrors({ 200: Account }),
      },
    },
    (req) => services.accounts.me(req.caller),
  )

  app.post(
    '/v2/me/webhook_secret/roll',
    {
      config: { bodyOptional: true },
      schema: {
        body: NoBody,
        tags: ['account'],
        operationId: 'rollWebhookSecret',
        summary: "Replaces this mode's webhook signing secret; the old one stops signing at once",
        response: withErrors({ 200: WebhookSecret }),
      },
    },
    async (req) => ({
      object: 'webhook_secret' as const,
      livemode: req.caller.livemode,
      secret: await services.accounts.rollWebhookSecret(req.caller),
    }),
  )
}
