import { newId } from '../domain/ids.js'
import { notFound } from '../errors.js'
import type { ChargeView } from '../http/schemas/charge.js'
import type { EventView } from '../http/schemas/event.js'
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

/**
 * Queues a notify call for an event, in the transaction that records it, so that an event and
 * its delivery are stored together or not at all.
 */
export type NotifyEnqueuer = (tx: Queryable, scope: Scope, event: EventView, url: string) => Promise<void>

export interface EventRecorder {
  record(tx: Queryable, scope: Scope, type: string, charge: ChargeView): Promise<EventView>
}

export function eventService(deps: { db: Db; enqueueNotify?: NotifyEnqueuer | undefined }) {
  const { db } = deps

  const recorder: EventRecorder = {
    async record(tx, scope, type, charge) {
      const row = await events.insertEvent(tx, scope, { id: newId('event'), type, chargeId: charge.id, data: charge })
      const view = eventView(row)
      const url = charge.source.redirect?.notify
      if (url && deps.enqueueNotify) await deps.enqueueNotify(tx, scope, view, url)
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
