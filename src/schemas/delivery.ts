import { type Static, Type } from 'typebox'
import { StringEnum, Timestamp } from './common.js'

export const DeliveryAttempt = Type.Object({
  number: Type.Integer({ description: 'Attempts are numbered from 1, in the order they were made' }),
  started_at: Timestamp,
  duration_ms: Type.Integer({ description: 'Until the status line, the error or the timeout' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The HTTP status the receiver answered, or null when no answer came',
  }),
  error: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why the attempt failed, as a class: http_status, timeout, connect_timeout, connection_refused, connection_reset, connection_closed, unreachable, tls, invalid_response, dns, address_refused, invalid_url, not_sent, network_error, interrupted (its worker stopped before recording an outcome); null when a 2xx came',
  }),
  succeeded: Type.Boolean({ description: 'true for a 2xx answer within the timeout' }),
})
export type DeliveryAttemptView = Static<typeof DeliveryAttempt>

export const Delivery = Type.Object({
  id: Type.String(),
  object: Type.Literal('delivery'),
  livemode: Type.Boolean(),
  event: Type.String({ description: 'The id of the event sent (evt_…)' }),
  event_type: Type.String(),
  url: Type.String({ description: "The source's redirect.notify address" }),
  status: StringEnum(['pending', 'delivered', 'failed'], {
    description:
      'pending: waiting for its next attempt or being sent; delivered: a 2xx was received; failed: the last scheduled attempt failed (see redeliver)',
  }),
  attempt_count: Type.Integer({ description: 'Attempts made so far, including one in flight' }),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], {
    description: 'While pending, when the next attempt is due; null otherwise',
  }),
  delivered_at: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
  attempts: Type.Array(DeliveryAttempt),
})
export type DeliveryView = Static<typeof Delivery>
