import { type Static, Type } from 'typebox'
import { Metadata, MetadataOut, Timestamp } from './common.js'
import { Source } from './source.js'

const MobileNumber = Type.String({ minLength: 5, maxLength: 25 })
const Description = Type.String({ minLength: 1, maxLength: 255 })
const Email = Type.String({ format: 'email', maxLength: 254 })

export const CreateCustomerBody = Type.Object(
  {
    email: Email,
    description: Description,
    mobile_number: Type.Optional(MobileNumber),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
)
export type CreateCustomerInput = Static<typeof CreateCustomerBody>

export const UpdateCustomerBody = Type.Object(
  {
    mobile_number: Type.Optional(MobileNumber),
    description: Type.Optional(Description),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, description: 'metadata, when given, replaces the whole object' },
)
export type UpdateCustomerInput = Static<typeof UpdateCustomerBody>

export const AttachSourceBody = Type.Object(
  { source: Type.String({ minLength: 1, maxLength: 100, description: 'a source id (src_…)' }) },
  { additionalProperties: false },
)

export const Customer = Type.Object({
  object: Type.Optional(Type.Literal('customer')),
  id: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  mobile_number: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  sources: Type.Array(Source),
  livemode: Type.Boolean(),
  created_at: Type.Optional(Timestamp),
  updated_at: Type.Optional(Timestamp),
  metadata: Type.Optional(MetadataOut),
})
export type CustomerView = Static<typeof Customer>

export const DeletedCustomer = Type.Object({
  id: Type.String(),
  object: Type.Literal('customer'),
  deleted: Type.Literal(true),
})

export const EmailParams = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }) })
