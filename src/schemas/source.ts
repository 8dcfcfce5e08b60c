import { type Static, Type } from 'typebox'
import { MetadataOut, PATTERN_P, StringEnum, TextP, Timestamp } from './common.js'

/** The nine source types, in the order of the interface. */
export const SOURCE_TYPES = [
  'card',
  'wallet_a',
  'wallet_b',
  'wallet_c',
  'wallet_d',
  'cardscheme_a',
  'wallet_e',
  'transfer_a',
  'qr_a',
] as const
export type SourceType = (typeof SOURCE_TYPES)[number]

export const SourceTypeSchema = StringEnum([...SOURCE_TYPES], { description: 'Source type' })

const Uri = (description: string) => Type.String({ minLength: 1, maxLength: 2083, format: 'uri', description })

export const Redirect = Type.Object(
  {
    success: Uri('Where the payer is sent after a successful payment'),
    fail: Uri('Where the payer is sent after a failed payment'),
    notify: Type.Optional(Uri('Called with each charge event until it answers 2xx (http or https)')),
  },
  { additionalProperties: false },
)

export const Address = Type.Object(
  {
    name: TextP(50, 'Full name of the account holder'),
    phone_number: Type.Optional(TextP(50)),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    line1: Type.Optional(TextP(255)),
    line2: Type.Optional(TextP(255)),
    city: Type.Optional(TextP(100)),
    state: Type.Optional(TextP(50)),
    country: Type.Optional(TextP(50)),
    zip_code: Type.Optional(TextP(50)),
  },
  { additionalProperties: false },
)

export const Owner = Type.Object(
  {
    billing: Type.Optional(Address),
    shipping: Type.Optional(Address),
    name: Type.Optional(Type.String({ maxLength: 50, description: 'Full name of the account holder' })),
    address_country: Type.Optional(Type.String({ minLength: 1, maxLength: 50, pattern: PATTERN_P })),
  },
  { additionalProperties: false },
)

export const CardInput = Type.Object(
  {
    name: TextP(50, 'Full name of the cardholder'),
    number: Type.String({
      pattern: '^[0-9]{12,19}$',
      description: 'The card number: 12 to 19 digits passing the Luhn check. Never returned.',
    }),
    exp_month: Type.String({ minLength: 1, maxLength: 2, pattern: '^(0?[1-9]|1[0-2])$' }),
    exp_year: Type.String({ minLength: 4, maxLength: 4, pattern: '^[0-9]{4}$' }),
    cvc: Type.String({
      minLength: 3,
      maxLength: 4,
      pattern: '^[0-9]+$',
      description: 'Security code: kept encrypted until the first authorization, never returned',
    }),
    address_line1: Type.Optional(TextP(255)),
    address_line2: Type.Optional(TextP(255)),
    address_city: Type.Optional(TextP(255)),
    address_state: Type.Optional(TextP(255)),
    address_country: Type.Optional(TextP(255)),
    address_zip: Type.Optional(TextP(50)),
  },
  { additionalProperties: false },
)

export const CreateSourceBody = Type.Object(
  {
    type: SourceTypeSchema,
    card: Type.Optional(CardInput),
    redirect: Type.Optional(Redirect),
    owner: Type.Optional(Owner),
  },
  { additionalProperties: false },
)
export type CreateSourceInput = Static<typeof CreateSourceBody>

export const Card = Type.Object({
  object: Type.Literal('card'),
  id: Type.String(),
  name: Type.String(),
  last4: Type.String(),
  exp_month: Type.String(),
  exp_year: Type.String(),
  address_line1: Type.Optional(Type.String()),
  address_line2: Type.Optional(Type.String()),
  address_city: Type.Optional(Type.String()),
  address_state: Type.Optional(Type.String()),
  address_country: Type.Optional(Type.String()),
  address_zip: Type.Optional(Type.String()),
  brand: Type.String(),
  country: Type.String(),
  cvc_checked: StringEnum(['unchecked', 'pass', 'fail']),
  funding: Type.String(),
  issuing_bank: Type.String(),
})
export type CardView = Static<typeof Card>

export const BankAccount = Type.Object({
  reference_id: Type.String(),
  bank_type: Type.String(),
  bank_code: Type.String(),
  account_name: Type.String(),
  account_number: Type.String({ description: 'Masked: only the last four digits are shown' }),
  account_type: Type.String(),
  expires_at: Type.String(),
})
export type BankAccountView = Static<typeof BankAccount>

const RedirectOut = Type.Object({
  success: Type.String(),
  fail: Type.String(),
  notify: Type.Optional(Type.String()),
})

const AddressOut = Type.Object({
  name: Type.String(),
  phone_number: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  line1: Type.Optional(Type.String()),
  line2: Type.Optional(Type.String()),
  city: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
  country: Type.Optional(Type.String()),
  zip_code: Type.Optional(Type.String()),
})

export const OwnerOut = Type.Object({
  billing: Type.Optional(AddressOut),
  shipping: Type.Optional(AddressOut),
  name: Type.Optional(Type.String()),
  address_country: Type.Optional(Type.String()),
})

const sourceFields = {
  object: Type.Literal('source'),
  id: Type.String(),
  type: SourceTypeSchema,
  card: Type.Optional(Card),
  bank_account: Type.Optional(BankAccount),
  redirect: Type.Optional(RedirectOut),
  owner: Type.Optional(OwnerOut),
  vaulted: Type.Boolean(),
  used: Type.Boolean(),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  metadata: Type.Optional(MetadataOut),
}

export const Source = Type.Object(sourceFields)
export type SourceView = Static<typeof Source>

export const Action = Type.Object({
  type: StringEnum(['redirect_to_url', 'verify_otp']),
  url: Type.Optional(Type.String()),
  confirmation_id: Type.Optional(Type.String()),
})

/** The source as a charge embeds it: the source fields plus the charge-only ones. */
export const ChargeSource = Type.Object({
  ...sourceFields,
  require_auth: Type.Optional(Type.Boolean()),
  action: Type.Optional(Action),
})
export type ChargeSourceView = Static<typeof ChargeSource>
