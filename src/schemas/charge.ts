import { type Static, Type } from 'typebox'
import { MAX_AMOUNT } from '../domain/money.js'
import { AnyKeys, ListQueryWith, Metadata, MetadataOut, PATTERN_P, StringEnum, Timestamp } from './common.js'
import { ChargeSource } from './source.js'

const Amount = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description })

export const CreateChargeBody = Type.Object(
  {
    amount: Amount('In the smallest currency unit'),
    currency: Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code, any case; returned lowercase' }),
    source: Type.String({ minLength: 1, maxLength: 100, description: 'A source id (src_…)' }),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    statement_descriptor: Type.Optional(
      Type.String({ minLength: 3, maxLength: 100, pattern: PATTERN_P, description: "Defaults to the account's name" }),
    ),
    capture: Type.Optional(Type.Boolean({ default: true, description: 'false: authorize now, capture later' })),
    require_auth: Type.Optional(
      Type.Boolean({ default: true, description: 'false: skip 3-D Secure for a card; no effect on vaulted cards' }),
    ),
    customer: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'The customer that owns a vaulted source' }),
    ),
    metadata: Type.Optional(Metadata),
    cvc: Type.Optional(
      Type.String({
        pattern: '^[0-9]{3,4}$',
        description:
          "The card's security code, 3 or 4 digits, checked with this authorization (a saved card's own code is not kept); never stored",
      }),
    ),
    redirect_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'Where the payer returns after a payer step when the source has no redirect: an https URL (http too in test mode)',
      }),
    ),
  },
  { additionalProperties: false },
)
export type CreateChargeInput = Static<typeof CreateChargeBody>

export const CaptureBody = Type.Object(
  { amount: Type.Optional(Amount('At most the authorized amount; the rest is released')) },
  { additionalProperties: false },
)

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(Amount('Default: all that is left to refund')),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
)

export const VerifyBody = Type.Object(
  {
    confirmation_id: Type.String({ minLength: 5, maxLength: 255 }),
    otp: Type.String({ minLength: 1, maxLength: 10 }),
  },
  { additionalProperties: false },
)

export const TestAuthorizeBody = Type.Object(
  { decision: StringEnum(['approve', 'decline']) },
  { additionalProperties: false },
)

export const Refund = Type.Object({
  object: Type.Literal('refund'),
  id: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  reason: Type.String(),
  status: StringEnum(['pending', 'succeeded', 'failed']),
  created_at: Timestamp,
  updated_at: Type.Optional(Timestamp),
})
export type RefundView = Static<typeof Refund>

export const FailureData = Type.Object({
  code: Type.String(),
  reason: Type.String(),
  next_steps: Type.String(),
  provider_response: AnyKeys(Type.Unknown()),
})

export const CHARGE_STATUSES = ['pending', 'succeeded', 'failed', 'voided', 'refunded'] as const

export const Charge = Type.Object({
  object: Type.Literal('charge'),
  id: Type.String(),
  amount: Type.Integer(),
  amount_refunded: Type.Integer(),
  authorized: Type.Boolean(),
  captured: Type.Boolean(),
  currency: Type.String(),
  statement_descriptor: Type.String(),
  description: Type.String(),
  source: ChargeSource,
  refunds: Type.Array(Refund),
  status: StringEnum([...CHARGE_STATUSES]),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  metadata: Type.Optional(MetadataOut),
  failure_data: Type.Optional(FailureData),
})
export type ChargeView = Static<typeof Charge>

export const ChargeListQuery = ListQueryWith({
  status: Type.Optional(StringEnum([...CHARGE_STATUSES], { description: 'Only the charges in this status' })),
})
export type ChargeListQueryInput = Static<typeof ChargeListQuery>

/** `charge` on the event and delivery lists: only those of one charge. */
export const OfChargeQuery = ListQueryWith({
  charge: Type.Optional(Type.String({ maxLength: 100, description: 'A charge id (ch_…): only its objects' })),
})
export type OfChargeQueryInput = Static<typeof OfChargeQuery>
