import type { FastifyInstance } from 'fastify'
import Router from 'find-my-way'
import { TEST_MODE_TAG } from './routes/accounts.js'

/** How the service's router matches a path: the app's router and the one below must agree. */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 300 }

/**
 * Keeps every route the app declares in a router of its own, matched as Fastify's is, to tell a
 * path that exists but does not take the request's method (405, with `Allow`) from one that does
 * not exist (404): Fastify's own router answers only whether the method and path match together.
 * Register before the routes.
 */
export function trackAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const router = Router(ROUTER_OPTIONS)
  const methods = new Set<string>()
  app.addHook('onRoute', (route) => {
    // the test-mode and operator routes exist for some callers only (test keys, the operator's
    // token): to anyone else they do not exist, so a wrong method on their paths is a 404 too
    if ((route.schema?.tags as string[] | undefined)?.includes(TEST_MODE_TAG)) return
    for (const method of [route.method].flat()) {
      router.on(method as Router.HTTPMethod, route.url, () => {})
      methods.add(method)
    }
  })
  return (path) => {
    try {
      return [...methods].filter((method) => router.find(method as Router.HTTPMethod, path) !== null)
    } catch {
      // a path the router cannot decode matches nothing
      return []
    }
  }
}
