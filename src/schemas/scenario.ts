import { type Static, Type } from 'typebox'
import { MAX_AMOUNT } from '../domain/money.js'
import { DECLINE_CODES, OVERRIDES, SCENARIO_NAMES } from '../domain/scenarios.js'
import { Charge, Refund } from './charge.js'
import { Metadata, StringEnum } from './common.js'
import { CreateCustomerBody, Customer } from './customer.js'
import { Redirect, Source } from './source.js'
import { TestClock } from './test-clock.js'

/** The overrides a scenario run takes; each scenario takes some of them (ScenarioDefinition). */
export const ScenarioOverrides = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'The charge amount; 1000 unless given' }),
    ),
    currency: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z]{3}$',
        description: 'The charge currency, an ISO 4217 code; usd unless given',
      }),
    ),
    metadata: Type.Optional({ ...Metadata, description: "The charge's metadata" }),
    customer: Type.Optional(
      Type.Union(
        [
          Type.String({ minLength: 1, maxLength: 100, description: 'An existing customer id (cus_…)' }),
          { ...CreateCustomerBody, description: 'A new customer, as POST /v2/customers/ takes it' },
        ],
        {
          description:
            'The customer the source is attached to: an existing customer id, or a new customer (email, description, …)',
        },
      ),
    ),
    decline_code: Type.Optional(
      StringEnum([...DECLINE_CODES], {
        description: `The decline code of the test card charged: ${DECLINE_CODES.join(', ')}`,
      }),
    ),
    notify: Type.Optional({
      ...Redirect.properties.notify,
      description: "The source's redirect.notify: events go there",
    }),
  },
  { additionalProperties: false },
)
export type ScenarioOverridesInput = Static<typeof ScenarioOverrides>

export const ScenarioParams = Type.Object({
  name: Type.String({ maxLength: 100, description: `A scenario name: ${SCENARIO_NAMES.join(', ')}` }),
})

export const ScenarioOverride = Type.Object({
  name: StringEnum([...OVERRIDES]),
  type: Type.String({ description: 'integer, string, object, or string or object' }),
  description: Type.String(),
})

export const Scenario = Type.Object({
  object: Type.Literal('scenario'),
  name: Type.String(),
  description: Type.String(),
  overrides: Type.Array(ScenarioOverride),
})
export type ScenarioView = Static<typeof Scenario>

export const ScenarioRun = Type.Object({
  object: Type.Literal('scenario_run'),
  scenario: Type.String(),
  objects: Type.Object({
    source: Type.Optional(Source),
    customer: Type.Optional(Customer),
    /** the first charge of the OTP flow, whose approval linked the bank account */
    linking_charge: Type.Optional(Charge),
    charge: Type.Optional(Charge),
    refund: Type.Optional(Refund),
    test_clock: Type.Optional(TestClock),
  }),
})
export type ScenarioRunView = Static<typeof ScenarioRun>
