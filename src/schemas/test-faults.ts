import { type Static, Type } from 'typebox'
import { StringEnum } from './common.js'

/** The header that asks for one fault on one request, in test mode. */
export const FAULT_HEADER = 'Jackdaw-Test-Fault'

/** The longest processor latency a fault may add, in milliseconds. */
export const MAX_FAULT_LATENCY_MS = 30_000
/** The longest a notify rule may hold a call, in seconds. */
export const MAX_NOTIFY_HOLD_SECONDS = 3_600
export const MAX_FAULT_RULES = 20

/** The faults one request may be given, by the header or by a rule. */
export const FAULT_NAMES = [
  'processor_timeout',
  'processor_unavailable',
  'processor_latency',
  'lost_response',
  'error_before_commit',
  'rate_limited',
] as const
export type FaultName = (typeof FAULT_NAMES)[number]

/** The faults that act on the processor call of an operation: only operations that make one take them. */
export const PROCESSOR_FAULTS: readonly FaultName[] = [
  'processor_timeout',
  'processor_unavailable',
  'processor_latency',
]

/** The operations a rule may name, each one route of the API. */
export const FAULT_OPERATIONS = {
  'charges.create': 'POST /v2/charges/',
  'charges.list': 'GET /v2/charges/',
  'charges.retrieve': 'GET /v2/charges/:ch_id',
  'charges.capture': 'POST /v2/charges/:ch_id/capture',
  'charges.void': 'POST /v2/charges/:ch_id/void',
  'charges.refund': 'POST /v2/charges/:ch_id/refund',
  'charges.verify': 'POST /v2/charges/:ch_id/verify',
  'sources.create': 'POST /v2/sources/',
  'sources.retrieve': 'GET /v2/sources/:src_id',
  'customers.create': 'POST /v2/customers/',
  'customers.update': 'PUT /v2/customers/:cus_id',
  'customers.delete': 'DELETE /v2/customers/:cus_id',
  'customers.attach_source': 'POST /v2/customers/:cus_id/sources',
  'deliveries.redeliver': 'POST /v2/deliveries/:dlv_id/redeliver',
} as const
export type FaultOperation = keyof typeof FAULT_OPERATIONS

/** The operations whose processor call the processor faults act on. */
export const PROCESSOR_OPERATIONS: readonly FaultOperation[] = [
  'charges.create',
  'charges.capture',
  'charges.void',
  'charges.refund',
  'charges.verify',
]

export const NOTIFY_FAULTS = ['delay', 'duplicate', 'reorder'] as const

const Rate = Type.Number({
  minimum: 0,
  maximum: 1,
  description: 'The share of calls the rule acts on, 0 to 1; 1 (every call) when left out',
})

/**
 * One rule: either an operation that fails (`operation` and `fault`) or notify calls that
 * misbehave (`notify`). Which fields go together is checked past the schema, field by field.
 */
export const FaultRule = Type.Object(
  {
    operation: Type.Optional(
      StringEnum(Object.keys(FAULT_OPERATIONS) as FaultOperation[], { description: 'The operation that fails' }),
    ),
    fault: Type.Optional(
      StringEnum([...FAULT_NAMES], { description: "How the operation fails, as the header's faults" }),
    ),
    latency_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_FAULT_LATENCY_MS,
        description: 'With processor_latency: how long the processor takes, in milliseconds',
      }),
    ),
    notify: Type.Optional(
      StringEnum([...NOTIFY_FAULTS], {
        description: 'Notify calls arrive late (delay), twice (duplicate) or in the reverse order (reorder)',
      }),
    ),
    seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_NOTIFY_HOLD_SECONDS,
        description: 'With delay: how late each call is sent; with reorder: how long calls are held (2 if left out)',
      }),
    ),
    rate: Type.Optional(Rate),
  },
  { additionalProperties: false },
)
export type FaultRuleInput = Static<typeof FaultRule>

export const FaultRulesBody = Type.Object(
  { rules: Type.Array(FaultRule, { maxItems: MAX_FAULT_RULES, description: "The account's rules; [] removes all" }) },
  { additionalProperties: false },
)

export const TestFaults = Type.Object({
  object: Type.Literal('test_faults'),
  rules: Type.Array(FaultRule),
})
