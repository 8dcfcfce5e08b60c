import type { EventView } from '../schemas/event.js'
import type { Queryable } from '../store/db.js'
import { insertDelivery } from '../store/deliveries.js'
import { makeId } from '../store/ids.js'
import type { Scope } from '../store/scope.js'

/**
 * An event's notify call as it is stored: the body is fixed here, so every attempt sends the same
 * bytes.
 */
export function deliveryFor(event: EventView, url: string, id: string): { id: string; url: string; payload: string } {
  return { id, url, payload: JSON.stringify(event) }
}

/**
 * Queues an event's notify call in the transaction that records the event: the call is stored
 * before it is sent, and exists exactly when the event does.
 */
export async function enqueueDelivery(tx: Queryable, scope: Scope, event: EventView, url: string): Promise<void> {
  const d = deliveryFor(event, url, await makeId(tx, scope, 'delivery'))
  await insertDelivery(tx, scope, { ...d, eventId: event.id, eventType: event.type })
}
