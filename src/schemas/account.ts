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

/** The body of POST /v2/accounts. */
export const NewAccount = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: "The account's name" }),
    deterministic: Type.Optional(
      Type.Boolean({
        description:
          "true: the account's test-mode ids come from `seed` and a counter, and its test clock starts at 2030-01-01T00:00:00Z and moves only when advanced, so the same requests in the same order get the same answers",
      }),
    ),
    seed: Type.Optional(
      Type.Union(
        [Type.String({ minLength: 1, maxLength: 100 }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })],
        {
          description:
            'With deterministic: true (and only then, which it needs), what its ids are made from; an integer is read as its decimal text',
        },
      ),
    ),
  },
  { additionalProperties: false },
)
export type NewAccountBody = Static<typeof NewAccount>

/** A new account, as POST /v2/accounts and `jackdaw account create --json` answer: its keys and webhook secrets. */
export const NewAccountKeys = Type.Object({
  id: Type.String(),
  name: Type.String(),
  sk_test_key: Type.String(),
  pk_test_key: Type.String(),
  sk_live_key: Type.String(),
  pk_live_key: Type.String(),
  webhook_secret_test: Type.String({ description: 'Signs test-mode notify calls (whsec_…)' }),
  webhook_secret_live: Type.String({ description: 'Signs live-mode notify calls (whsec_…)' }),
})

export const DeletedAccount = Type.Object({
  id: Type.String(),
  object: Type.Literal('account'),
  deleted: Type.Literal(true),
})
