import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Timestamp, withErrors } from '../../schemas/common.js'
import type { Services } from '../../services/index.js'
import { MAX_CLOCK_ADVANCE_SECONDS } from '../../services/test-clock.js'
import { TEST_MODE_TAG } from './accounts.js'

const TestClock = Type.Object({
  object: Type.Literal('test_clock'),
  now: Timestamp,
  offset_seconds: Type.Integer({ minimum: 0, description: "How far the account's test-mode time runs ahead" }),
})

const AdvanceBody = Type.Object(
  {
    seconds: Type.Integer({
      minimum: 1,
      maximum: MAX_CLOCK_ADVANCE_SECONDS,
      description: 'How far to move the clock forward: 1 second to a year',
    }),
  },
  { additionalProperties: false },
)

/** The account's test clock (test keys only; a live key finds no such route). */
export const testClockRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = [TEST_MODE_TAG]
  app.get(
    '/v2/test/clock',
    { schema: { tags, summary: "The account's test clock", response: withErrors({ 200: TestClock }) } },
    (req) => services.testClock.read(req.caller),
  )
  app.post(
    '/v2/test/clock/advance',
    {
      schema: {
        tags,
        summary: "Move the account's test clock forward",
        body: AdvanceBody,
        response: withErrors({ 200: TestClock }),
      },
    },
    (req) => services.testClock.advance(req.caller, req.body.seconds),
  )
}
