import { type Static, Type } from 'typebox'
import { Charge } from './charge.js'
import { Timestamp } from './common.js'

export const Event = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String({
    description:
      'charge.pending, charge.succeeded, charge.failed, charge.captured, charge.voided, charge.refunded, charge.refund_failed',
  }),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  data: Type.Object({ object: Charge }, { description: 'The charge as it was when the event happened' }),
})
export type EventView = Static<typeof Event>
