import { type Static, Type } from 'typebox'
import { Timestamp } from './common.js'

export const Account = Type.Object({
  object: Type.Literal('account'),
  id: Type.String(),
  name: Type.String(),
  livemode: Type.Boolean({ description: 'The mode of the key used' }),
  pk_test_key: Type.String(),
  pk_live_key: Type.String(),
  webhook_secret: Type.String({ description: 'Signs notify calls of this mode (whsec_…)' }),
  created_at: Timestamp,
})

export const WebhookSecret = Type.Object({
  object: Type.Literal('webhook_secret'),
  livemode: Type.Boolean(),
  secret: Type.String(),
})
export type AccountView = Static<typeof Account>
export type WebhookSecretView = Static<typeof WebhookSecret>
