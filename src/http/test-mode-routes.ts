import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/**
 * The test-mode routes of a plugin are not there for a live key: it finds no such route, whatever
 * it sends, before its body or query is checked (which would tell it the route exists).
 */
export function hiddenFromLiveKeys(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (request.caller?.livemode) {
      throw new AppError('route_missing', `No route ${request.method} ${request.url.split('?')[0]}`)
    }
  })
}
