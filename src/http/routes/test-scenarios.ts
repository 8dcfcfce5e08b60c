import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ListOf, NoQuery, withErrors } from '../../schemas/common.js'
import { Scenario, ScenarioOverrides, ScenarioParams, ScenarioRun } from '../../schemas/scenario.js'
import type { Services } from '../../services/index.js'
import { NotifyAllowList } from '../../services/notify-address.js'
import { scenarioBodyViolations } from '../../services/scenarios.js'
import { hiddenFromLiveKeys } from '../test-mode-routes.js'
import { TEST_MODE_TAG } from './accounts.js'
import { hostedPageUrlOf } from './hosted.js'

/** Named flows run through the service, as a client would step by step (test keys only). */
export const testScenarioRoutes: FastifyPluginAsyncTypebox<{
  services: Services
  publicUrl?: string | undefined
  /** the receivers the operator allows besides public addresses, as the services have them */
  notifyAllow?: NotifyAllowList | undefined
}> = async (app, { services, publicUrl, notifyAllow = NotifyAllowList.none }) => {
  const tags = [TEST_MODE_TAG]
  hiddenFromLiveKeys(app)

  app.get(
    '/v2/test/scenarios',
    {
      schema: {
        tags,
        operationId: 'listScenarios',
        querystring: NoQuery,
        summary: 'The scenarios there are, with the overrides each takes',
        response: withErrors({ 200: ListOf(Scenario) }),
      },
    },
    (req) => ({ object: 'list' as const, next: null, data: services.scenarios.list(req.caller) }),
  )

  app.post(
    '/v2/test/scenarios/:name',
    {
      config: {
        bodyOptional: true,
        bodyRules: (body, livemode) => scenarioBodyViolations(body, livemode, notifyAllow),
        refusesTestFaults: true,
      },
      schema: {
        tags,
        operationId: 'runScenario',
        summary: 'Run a scenario',
        description:
          'Makes the objects of a named flow through the same operations a client would call, with their events and notify calls, and answers them.',
        params: ScenarioParams,
        body: ScenarioOverrides,
        response: withErrors({ 200: ScenarioRun }),
      },
    },
    (req) => {
      const urls = hostedPageUrlOf(req, publicUrl)
      return services.scenarios.run(
        req.caller,
        req.params.name,
        req.body,
        { create: urls, payer: urls },
        req.idempotencyClaim,
      )
    },
  )
}
