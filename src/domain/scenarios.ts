/**
 * The test-mode scenarios: named flows that the service runs through its own use cases, as a
 * client would step by step. Which overrides each takes is part of its definition: any other is
 * refused, so that an override never passes unnoticed.
 */

export const OVERRIDES = ['amount', 'currency', 'metadata', 'customer', 'decline_code', 'notify'] as const
export type OverrideName = (typeof OVERRIDES)[number]

/** The decline codes of the test cards (docs/testing.md), each with the card that gives it. */
export const DECLINE_CARDS = {
  card_declined: '4000000000000002',
  insufficient_funds: '4000000000009995',
  lost_card: '4000000000009987',
  stolen_card: '4000000000009979',
  expired_card: '4000000000000069',
  incorrect_cvc: '4000000000000127',
  processing_error: '4000000000000119',
  processor_timeout: '4000000000000036',
} as const
export type DeclineCode = keyof typeof DECLINE_CARDS
export const DECLINE_CODES = Object.keys(DECLINE_CARDS) as DeclineCode[]

export const SUCCEEDING_CARD = '4242424242424242'
export const THREE_D_SECURE_CARD = '4000000000003220'

export const SCENARIO_NAMES = [
  'charge.succeeded',
  'charge.captured',
  'charge.voided',
  'charge.failed',
  'charge.refunded',
  'charge.partially_refunded',
  'charge.3ds_approved',
  'charge.3ds_declined',
  'charge.payment_expired',
  'charge.otp_verified',
  'customer.source_attached',
] as const
export type ScenarioName = (typeof SCENARIO_NAMES)[number]

export interface ScenarioDefinition {
  name: ScenarioName
  description: string
  overrides: readonly OverrideName[]
}

const CHARGE = ['amount', 'currency', 'metadata', 'notify'] as const
const CARD_CHARGE = [...CHARGE, 'customer'] as const

export const SCENARIOS: readonly ScenarioDefinition[] = [
  {
    name: 'charge.succeeded',
    description: 'A card charge that succeeds and is captured at once (4242424242424242).',
    overrides: CARD_CHARGE,
  },
  {
    name: 'charge.captured',
    description: 'A card charge authorized with capture false, then captured in full.',
    overrides: CARD_CHARGE,
  },
  {
    name: 'charge.voided',
    description: 'A card charge authorized with capture false, then voided.',
    overrides: CARD_CHARGE,
  },
  {
    name: 'charge.failed',
    description: 'A card charge declined with decline_code (card_declined unless given), by its test card.',
    overrides: [...CARD_CHARGE, 'decline_code'],
  },
  {
    name: 'charge.refunded',
    description: 'A card charge that succeeds, then is refunded in full.',
    overrides: CARD_CHARGE,
  },
  {
    name: 'charge.partially_refunded',
    description: 'A card charge that succeeds, then is refunded half its amount (rounded down; amount at least 2).',
    overrides: CARD_CHARGE,
  },
  {
    name: 'charge.3ds_approved',
    description: 'A card charge that needs 3-D Secure (4000000000003220); the payer approves on the hosted page.',
    overrides: CHARGE,
  },
  {
    name: 'charge.3ds_declined',
    description: 'A card charge that needs 3-D Secure; the payer declines on the hosted page.',
    overrides: CHARGE,
  },
  {
    name: 'charge.payment_expired',
    description:
      "A card charge waiting for 3-D Secure whose payer never answers: the account's test clock is moved past the payer timeout and the charge fails with payment_expired. Every other charge of the account waiting for its payer that long fails too.",
    overrides: CHARGE,
  },
  {
    name: 'charge.otp_verified',
    description:
      'A transfer_a source attached to a customer, linked by a first charge the payer approves on the hosted page, then charged again and confirmed with the one-time password 123456.',
    overrides: CARD_CHARGE,
  },
  {
    name: 'customer.source_attached',
    description: 'A card source (4242424242424242) attached to a customer.',
    overrides: ['customer'],
  },
]

export function scenarioNamed(name: string): ScenarioDefinition | undefined {
  return SCENARIOS.find((s) => s.name === name)
}
