import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Timestamp, withErrors } from '../../schemas/common.js'
import type { Services } from '../../services/index.js'

const Account = Type.Object({
  object: Type.Literal('account'),
  id: Type.String(),
  name: Type.String(),
  livemode: Type.Boolean({ description: 'The mode of the key used' }),
  pk_test_key: Type.String(),
  pk_live_key: Type.String(),
  webhook_secret: Type.String({ description: 'Signs notify calls of this mode (whsec_…)' }),
  created_at: Timestamp,
})

const WebhookSecret = Type.Object({
  object: Type.Literal('webhook_secret'),
  livemode: Type.Boolean(),
  secret: Type.String(),
})

export const meRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/v2/me',
    { schema: { tags: ['account'], summary: 'The account of the key', response: withErrors({ 200: Account }) } },
    (req) => services.accounts.me(req.caller),
  )

  app.post(
    '/v2/me/webhook_secret/roll',
    {
      config: { bodyOptional: true },
      schema: {
        body: Type.Object({}, { additionalProperties: false }),
        tags: ['account'],
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
