import { notFound } from '../errors.js'
import { deliveryFor, enqueueDelivery } from '../notify/outbox.js'
import type { ChargeView } from '../schemas/charge.js'
import type { EventView } from '../schemas/event.js'
import type { EventToStore } from '../store/authorization-outcomes.js'
import type { Db, Queryable } from '../store/db.js'
import type { EventRow } from '../store/events.js'
import * as events from '../store/events.js'
import { makeId } from '../store/ids.js'
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
  /** The same, as values for a caller that stores them in its own statement, made at `at`. */
  prepare(scope: Scope, type: string, charge: ChargeView, at: string): Promise<EventToStore>
  /** Tells the delivery worker of a notify call such a caller stored. */
  stored(event: EventToStore): void
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
      const row = await events.insertEvent(tx, scope, {
        id: await makeId(tx, scope, 'event'),
        type,
        chargeId: charge.id,
        data: charge,
      })
      const view = eventView(row)
      const url = charge.source.redirect?.notify
      if (url) {
        await enqueueDelivery(tx, scope, view, url)
        deps.onNotifyQueued?.()
      }
      return view
    },
    async prepare(scope, type, charge, at) {
      const id = await makeId(db, scope, 'event')
      const url = charge.source.redirect?.notify
      const view = eventView({ id, livemode: scope.livemode, type, charge_id: charge.id, data: charge, created_at: at })
      return {
        id,
        type,
        data: charge,
        delivery: url ? deliveryFor(view, url, await makeId(db, scope, 'delivery')) : undefined,
      }
    },
    stored(event) {
      if (event.delivery) deps.onNotifyQueued?.()
    },
  }

  async function get(scope: Scope, id: string): Promise<EventView> {
    const row = await events.getEvent(db, scope, id)
    if (!row) throw notFound('event', id)
    return eventView(row)
  }

  /** A page of events, newest first; with `chargeId`, only that charge's. */
  async function list(scope: Scope, page: PageRequest, chargeId?: string | undefined): Promise<Page<EventView>> {
    const found = await events.listEvents(db, scope, page, chargeId)
    return { rows: found.rows.map(eventView), hasMore: found.hasMore }
  }

  /** Up to `limit` events after `afterId` (all of the scope's when null), oldest first. */
  async function after(scope: Scope, afterId: string | null, limit: number): Promise<EventView[]> {
    return (await events.eventsAfter(db, scope, afterId, limit)).map(eventView)
  }

  return { recorder, get, list, after, newestId: (scope: Scope) => events.newestEventId(db, scope) }
}
