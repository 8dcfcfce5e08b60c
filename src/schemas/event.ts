import { type Static, Type } from 'typebox'
import { Charge } from './charge.js'
import { Timestamp } from './common.js'

/** Every type an event can have. */
export const EVENT_TYPES = [
  'charge.pending',
  'charge.succeeded',
  'charge.failed',
  'charge.captured',
  'charge.voided',
  'charge.refunded',
  'charge.refund_failed',
] as const

export const Event = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String({ description: EVENT_TYPES.join(', ') }),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  data: Type.Object({ object: Charge }, { description: 'The charge as it was when the event happened' }),
})
export type EventView = Static<typeof Event>
