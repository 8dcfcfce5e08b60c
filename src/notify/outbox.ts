import { newId } from '../domain/ids.js'
import type { NotifyEnqueuer } from '../services/events.js'
import { insertDelivery } from '../store/deliveries.js'

/**
 * Queues an event's notify call in the transaction that records the event: the call is stored
 * before it is sent, and exists exactly when the event does. The body is fixed here, so every
 * attempt sends the same bytes.
 */
export const enqueueDelivery: NotifyEnqueuer = async (tx, scope, event, url) => {
  await insertDelivery(tx, scope, {
    id: newId('delivery'),
    eventId: event.id,
    eventType: event.type,
    url,
    payload: JSON.stringify(event),
  })
}
