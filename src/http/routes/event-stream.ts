import type { ServerResponse } from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { AppError } from '../../errors.js'
import { NoQuery, withErrors } from '../../schemas/common.js'
import type { Services } from '../../services/index.js'
import type { Scope } from '../../store/scope.js'
import { presentedKey } from '../auth.js'

export interface EventStreamSettings {
  /** how often an open stream looks for new events */
  pollMs: number
  /** how often a comment line keeps an idle connection open through proxies */
  keepAliveMs?: number
}

export const DEFAULT_EVENT_STREAM_POLL_MS = 500

/**
 * How long a transaction may take between making an event's id and committing it. Ids sort by
 * the time they were made, not by commit: a stream looks this far back on every poll, so an event
 * that commits after a newer one was sent is sent too, and never twice on one connection.
 */
const COMMIT_LAG_MS = 5_000
const BATCH = 100
const EVENT_ID = /^evt_[0-9a-f]{32}$/

/** Sorts before every event's id: where a stream of an account without events yet begins. */
const BEFORE_EVERY_EVENT = `evt_${'0'.repeat(32)}`

/** The lowest id an event made at `ms` can have: its time part, and nothing after it. */
const eventIdAt = (ms: number) => `evt_${Math.max(0, ms).toString(16).padStart(12, '0')}`

/** When an event's id says it was made: a deterministic account's ids carry its test clock's time. */
const madeAt = (id: string) => Number.parseInt(id.slice(4, 16), 16)

const Headers = Type.Object({
  'last-event-id': Type.Optional(Type.String({ description: 'Resume after this event (evt_…)' })),
})

/**
 * `GET /v2/events/stream`: the caller's events as server-sent events, oldest first, as they are
 * recorded. A stream opened without `Last-Event-ID` starts with the events recorded after it
 * opened, and first names that point as an `id:` without data; with one, it first sends every
 * stored event after that id.
 */
export const eventStreamRoutes: FastifyPluginAsyncTypebox<{
  services: Services
  settings: EventStreamSettings
}> = async (app, { services, settings }) => {
  const open = new Set<ServerResponse>()
  app.addHook('preClose', async () => {
    for (const res of open) res.end()
  })

  app.get(
    '/v2/events/stream',
    {
      config: { streams: true },
      schema: {
        tags: ['events'],
        operationId: 'streamEvents',
        querystring: NoQuery,
        summary: 'Stream events as they happen (server-sent events)',
        description:
          'text/event-stream: one message per event, `id:` its id and `data:` the event as a notify call carries it. A stream opened without `Last-Event-ID` first sends an `id:` without data, where it begins. Reconnect with `Last-Event-ID` (the last id received) to get every event after that one; after a reconnect, events of the few seconds before it may come again (ignore an id seen before).',
        headers: Headers,
        response: withErrors({ 200: Type.String({ description: 'text/event-stream' }) }),
      },
    },
    async (req, reply) => {
      const resumeFrom = req.headers['last-event-id']
      if (resumeFrom !== undefined && !EVENT_ID.test(resumeFrom)) {
        throw new AppError('header_invalid', 'Last-Event-ID must be an event id (evt_ and 32 hex digits)', {
          param: 'Last-Event-ID',
        })
      }
      // HEAD asks for the headers alone: the stream would never end
      if (req.method === 'HEAD') {
        return reply
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          .send('')
      }
      const scope: Scope = { accountId: req.caller.accountId, livemode: req.caller.livemode }
      const presented = presentedKey(req)
      // a fresh stream starts after what is stored now; a resumed one looks back over the window
      // in which an event older than the last one sent may still have been committing
      const floor = resumeFrom === undefined ? await services.events.newestId(scope) : null
      let cursor = resumeFrom ?? floor
      // the event a resumed stream names was received: it is not sent again
      const sent = new Set<string>(resumeFrom === undefined ? [] : [resumeFrom])

      reply.hijack()
      const res = reply.raw
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-content-type-options': 'nosniff',
        // a stream ended by a shutdown ends its connection too, rather than leave it kept alive
        connection: 'close',
        'request-id': req.id,
      })
      // a new stream names where it begins, as the id of no event: a client that reconnects with
      // it as Last-Event-ID, having had no event yet, still misses none made in between
      res.write(resumeFrom === undefined ? `retry: 1000\nid: ${floor ?? BEFORE_EVERY_EVENT}\n\n` : 'retry: 1000\n\n')
      open.add(res)

      let timer: NodeJS.Timeout | undefined
      let closed = false
      const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), settings.keepAliveMs ?? 15_000)
      const stop = () => {
        closed = true
        clearTimeout(timer)
        clearInterval(keepAlive)
        open.delete(res)
      }
      res.on('close', stop)

      const poll = async () => {
        // a key rolled, or an account deleted, while its stream is open ends the stream as it
        // refuses the key's next request (at once in this process, within its cache's life in others)
        if (presented) await services.accounts.authenticate(presented.key, presented.hash)
        const now = Date.now()
        const horizon = eventIdAt(now - COMMIT_LAG_MS)
        // the window is of the real time: ids made on a clock ahead of it (a deterministic
        // account's, from 2030) are read on from the last one sent
        const ahead = cursor !== null && madeAt(cursor) > now + COMMIT_LAG_MS
        let from = cursor !== null && horizon < cursor && !ahead ? horizon : cursor
        if (floor !== null && (from === null || from < floor)) from = floor
        for (;;) {
          const batch = await services.events.after(scope, from, BATCH)
          for (const event of batch) {
            if (sent.has(event.id)) continue
            sent.add(event.id)
            if (cursor === null || event.id > cursor) cursor = event.id
            res.write(`id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`)
          }
          if (closed || batch.length < BATCH) break
          from = (batch[batch.length - 1] as { id: string }).id
        }
        // what is below where the next poll reads from can no longer come, and is not looked at again
        const next = ahead ? cursor : horizon
        for (const id of sent) if (next !== null && id < next) sent.delete(id)
      }
      const loop = () => {
        if (closed) return
        poll().then(
          () => {
            if (!closed) timer = setTimeout(loop, settings.pollMs)
          },
          (err) => {
            if (!(err instanceof AppError && err.status === 401)) req.log.error({ err }, 'event stream failed')
            res.end()
          },
        )
      }
      loop()
    },
  )
}
