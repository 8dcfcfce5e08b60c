import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NoQuery, withErrors } from '../../schemas/common.js'
import { FaultRulesBody, TestFaults } from '../../schemas/test-faults.js'
import type { Services } from '../../services/index.js'
import { hiddenFromLiveKeys } from '../test-mode-routes.js'
import { TEST_MODE_TAG } from './accounts.js'

/** The account's fault rules (test keys only; a live key finds no such route). */
export const testFaultRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = [TEST_MODE_TAG]
  hiddenFromLiveKeys(app)
  app.get(
    '/v2/test/faults',
    {
      schema: {
        tags,
        operationId: 'retrieveTestFaults',
        querystring: NoQuery,
        summary: "The account's test-mode fault rules",
        response: withErrors({ 200: TestFaults }),
      },
    },
    (req) => services.testFaults.read(req.caller),
  )
  app.put(
    '/v2/test/faults',
    {
      schema: {
        tags,
        operationId: 'replaceTestFaults',
        summary: "Replace the account's test-mode fault rules",
        description:
          'Operations that fail at a rate, and notify calls that arrive late, twice or out of order. ' +
          'One request may also be given a fault by the Jackdaw-Test-Fault header (docs/testing.md).',
        body: FaultRulesBody,
        response: withErrors({ 200: TestFaults }),
      },
    },
    (req) => services.testFaults.replace(req.caller, req.body.rules),
  )
}
