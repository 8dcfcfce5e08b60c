import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NoQuery, withErrors } from '../../schemas/common.js'
import { AdvanceBody, TestClock } from '../../schemas/test-clock.js'
import type { Services } from '../../services/index.js'
import { hiddenFromLiveKeys } from '../test-mode-routes.js'
import { TEST_MODE_TAG } from './accounts.js'

/** The account's test clock (test keys only; a live key finds no such route). */
export const testClockRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = [TEST_MODE_TAG]
  hiddenFromLiveKeys(app)
  app.get(
    '/v2/test/clock',
    {
      schema: {
        tags,
        operationId: 'retrieveTestClock',
        querystring: NoQuery,
        summary: "The account's test clock",
        response: withErrors({ 200: TestClock }),
      },
    },
    (req) => services.testClock.read(req.caller),
  )
  app.post(
    '/v2/test/clock/advance',
    {
      schema: {
        tags,
        operationId: 'advanceTestClock',
        summary: "Move the account's test clock forward",
        body: AdvanceBody,
        response: withErrors({ 200: TestClock }),
      },
    },
    (req) => services.testClock.advance(req.caller, req.body.seconds, req.idempotencyClaim?.key),
  )
}
