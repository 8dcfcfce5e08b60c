import { AppError, notFound } from '../errors.js'
import type { DeliveryView } from '../schemas/delivery.js'
import type { Db, Queryable } from '../store/db.js'
import * as store from '../store/deliveries.js'
import type { Page, PageRequest } from '../store/list.js'
import type { Scope } from '../store/scope.js'

export type { DeliveryView }

export function deliveryView(row: store.DeliveryRow, attempts: store.AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    object: 'delivery',
    livemode: row.livemode,
    event: row.event_id,
    event_type: row.event_type,
    url: row.url,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    delivered_at: row.delivered_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    attempts: attempts.map((a) => ({
      number: a.number,
      started_at: a.started_at,
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
      succeeded: a.succeeded,
    })),
  }
}

async function withAttempts(db: Queryable, rows: store.DeliveryRow[]): Promise<DeliveryView[]> {
  const attempts = await store.attemptsOf(
    db,
    rows.map((r) => r.id),
  )
  return rows.map((r) =>
    deliveryView(
      r,
      attempts.filter((a) => a.delivery_id === r.id),
    ),
  )
}

/** One delivery with its attempts; without a scope, any account's (the operator's command line). */
export async function getDelivery(db: Queryable, deliveryId: string, scope?: Scope): Promise<DeliveryView> {
  const row = await store.getDelivery(db, deliveryId, scope)
  if (!row) throw notFound('delivery', deliveryId)
  return (await withAttempts(db, [row]))[0] as DeliveryView
}

/**
 * Queues a failed delivery for one more attempt, due at once; a worker of any process sharing the
 * store makes it. Should that attempt fail too, the delivery is failed again, with no further
 * schedule. Without a scope, any account's delivery (the operator's command line).
 * Throws AppError resource_missing (404) or delivery_not_failed (400).
 */
export async function redeliver(
  db: Queryable,
  deliveryId: string,
  scope?: Scope,
  idempotencyKey?: string,
): Promise<DeliveryView> {
  const row = await store.requeueFailed(db, deliveryId, scope, idempotencyKey)
  if (row) return (await withAttempts(db, [row]))[0] as DeliveryView
  const existing = await store.getDelivery(db, deliveryId, scope)
  if (!existing) throw notFound('delivery', deliveryId)
  throw new AppError(
    'delivery_not_failed',
    `The delivery ${deliveryId} is ${existing.status}; only a failed delivery can be redelivered`,
    { param: 'id' },
  )
}

export function deliveryService(deps: { db: Db; onQueued?: (() => void) | undefined }) {
  const { db } = deps

  /** A page of deliveries, newest first; with `chargeId`, only those of that charge's events. */
  async function list(scope: Scope, page: PageRequest, chargeId?: string | undefined): Promise<Page<DeliveryView>> {
    const found = await store.listDeliveries(db, scope, page, chargeId)
    return { rows: await withAttempts(db, found.rows), hasMore: found.hasMore }
  }

  return {
    list,
    get: (scope: Scope, id: string) => getDelivery(db, id, scope),
    async redeliver(scope: Scope, id: string, idempotencyKey?: string) {
      const view = await redeliver(db, id, scope, idempotencyKey)
      deps.onQueued?.()
      return view
    },
  }
}

export type DeliveryService = ReturnType<typeof deliveryService>
