import { newId } from '../domain/ids.js'
import { notFound } from '../errors.js'
import { enqueueDelivery } from '../notify/outbox.js'
import type { ChargeView } from '../schemas/charge.js'
import type { EventView } from '../schemas/event.js'
import type { Db, Queryable } from '../store/db.js'
import type { EventRow } from '../store/events.js'
import * as events from '../store/events.js'
import type { Page, PageRequest } from '../store/list.js'
import type { Scope } from '../store/scope.js'

export type { EventView }

export function eventView(e: EventRow): EventView {
  return {
    id: e.id,
    object: 'event',
    type: e.type,
    livemode: e.livemode,
    created_at: e.created_at,
    data: { object: e.data as ChargeView },
  }
}

export interface EventRecorder {
  /** Stores an event with its notify call (when the charge's source has a notify address). */
  record(tx: Queryable, scope: Scope, type: string, charge: ChargeView): Promise<EventView>
}

export function eventService(deps: {
  db: Db
  /**
   * called when a notify call is queued, so a worker in this process can look at once rather than
   * at its next poll; may run before the queueing transaction commits
   */
  onNotifyQueued?: (() => void) | undefined
}) {
  const { db } = deps

  const recorder: EventRecorder = {
    async record(tx, scope, type, charge) {
      const row = await events.insertEvent(tx, scope, { id: newId('event'), type, chargeId: charge.id, data: charge })
      const view = eventView(row)
      const url = charge.source.redirect?.notify
      if (url) {
        await enqueueDelivery(tx, scope, view, url)
        deps.onNotifyQueued?.()
      }
      return view
    },
  }

  async function get(scope: Scope, id: string): Promise<EventView> {
    const row = await events.getEvent(db, scope, id)
    if (!row) throw notFound('event', id)
    return eventView(row)
  }

  async function list(scope: Scope, page: PageRequest): Promise<Page<EventView>> {
    const found = await events.listEvents(db, scope, page)
    return { rows: found.rows.map(eventView), hasMore: found.hasMore }
  }

  return { recorder, get, list }
}
