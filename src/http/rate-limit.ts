import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { AppError } from '../errors.js'
import { rateLimitKey } from './rate-key.js'

export interface RateLimitSettings {
  max: number
  windowMs: number
  redis?: Redis | undefined
  /** keeps the counters of several deployments (or tests) on one Redis apart */
  namespace?: string
}

/**
 * Limits every route to `max` requests per key or client address (http/rate-key.ts) per window,
 * refused in the one error envelope. Its hooks become each route's own onRequest hooks, so it
 * must be registered before the routes, and its count runs before the key check. Requests no
 * route takes (404, 405) are counted too, by address, before their body is read, as a route's are.
 */
export async function registerRateLimit(app: FastifyInstance, limit: RateLimitSettings): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: limit.max,
    timeWindow: limit.windowMs,
    redis: limit.redis,
    nameSpace: limit.namespace ?? 'jackdaw-rate:',
    // a Redis outage must not stop payments: requests pass uncounted until it is back
    skipOnError: true,
    keyGenerator: rateLimitKey,
    errorResponseBuilder: (_req, ctx) =>
      new AppError(
        'rate_limited',
        `Too many requests: at most ${ctx.max} per ${limit.windowMs} ms for one key or address; retry after ${ctx.after}`,
      ),
  })
  // the plugin hooks routes only; the not-found handler takes the root's hooks, this one among them
  const limitUnrouted = app.rateLimit()
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done()
    limitUnrouted.call(app, request, reply).then(() => done(), done)
  })
}
