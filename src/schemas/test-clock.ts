import { Type } from 'typebox'
import { MAX_CLOCK_ADVANCE_SECONDS } from '../domain/time.js'
import { Timestamp } from './common.js'

export const TestClock = Type.Object({
  object: Type.Literal('test_clock'),
  now: Timestamp,
  offset_seconds: Type.Integer({ minimum: 0, description: "How far the account's test-mode time runs ahead" }),
})

export const AdvanceBody = Type.Object(
  {
    seconds: Type.Integer({
      minimum: 1,
      maximum: MAX_CLOCK_ADVANCE_SECONDS,
      description: 'How far to move the clock forward: 1 second to a year',
    }),
  },
  { additionalProperties: false },
)
