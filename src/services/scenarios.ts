import {
  DECLINE_CARDS,
  OVERRIDES,
  SCENARIOS,
  type ScenarioDefinition,
  SUCCEEDING_CARD,
  scenarioNamed,
  THREE_D_SECURE_CARD,
} from '../domain/scenarios.js'
import { MAX_CLOCK_OFFSET_SECONDS } from '../domain/time.js'
import { AppError, invalidParams, type Violation } from '../errors.js'
import { TEST_OTP_SUCCEEDS } from '../processor/simulator.js'
import type { ChargeView, CreateChargeInput } from '../schemas/charge.js'
import type { CustomerView } from '../schemas/customer.js'
import {
  ScenarioOverrides,
  type ScenarioOverridesInput,
  type ScenarioRunView,
  type ScenarioView,
} from '../schemas/scenario.js'
import type { CreateSourceInput, SourceView } from '../schemas/source.js'
import type { Scope } from '../store/scope.js'
import { type ChargeService, chargeBodyViolations, type HostedPageUrl } from './charges/index.js'
import { type CustomerService, customerBodyViolations } from './customers.js'
import { type NotifyAllowList, notifyAddressWithoutLookup } from './notify-address.js'
import type { NotifyAddressCheck, SourceService } from './sources.js'
import type { TestClockService } from './test-clock.js'

/** JACKDAW_PAYER_TIMEOUT_SECONDS' default, for an app that runs no recovery sweep of its own. */
export const DEFAULT_PAYER_TIMEOUT_MS = 86_400_000

/** Where a scenario's payer would be sent: the service has no shop of its own to name. */
export const SCENARIO_REDIRECT = {
  success: 'https://example.com/jackdaw-scenario/success',
  fail: 'https://example.com/jackdaw-scenario/fail',
}

/** How long a payment_expired run waits for a sweep under way elsewhere to decide its charge. */
const EXPIRY_WAIT_MS = 30_000

/** The hosted-page addresses of a request: for new charges, and for a payer's answers. */
export interface ScenarioUrls {
  create: HostedPageUrl
  payer: HostedPageUrl
}

type Objects = ScenarioRunView['objects']

export interface ScenarioDeps {
  sources: SourceService
  customers: CustomerService
  charges: ChargeService
  testClock: TestClockService
  checkNotifyAddress: NotifyAddressCheck
  /** how long a charge waits for its payer before the recovery sweep fails it */
  payerTimeoutMs?: number | undefined
}

/** An override's type as the list shows it, read from its schema. */
function typeOf(schema: { type?: string; anyOf?: unknown[]; enum?: unknown[] }): string {
  if (schema.anyOf) return schema.anyOf.map((s) => typeOf(s as typeof schema)).join(' or ')
  if (schema.enum) return 'string'
  return schema.type ?? 'any'
}

function viewOf(def: ScenarioDefinition): ScenarioView {
  return {
    object: 'scenario',
    name: def.name,
    description: def.description,
    overrides: def.overrides.map((name) => {
      const schema = ScenarioOverrides.properties[name] as Parameters<typeof typeOf>[0] & { description?: string }
      return { name, type: typeOf(schema), description: schema.description ?? '' }
    }),
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The token a hosted-page address carries: the payer's browser posts it back with its answer. */
function tokenOf(charge: ChargeView): string {
  const url = charge.source.action?.url ?? ''
  return new URL(url, 'http://localhost').searchParams.get('token') ?? ''
}

/**
 * Test-mode scenarios (domain/scenarios.ts): each runs through the same use cases the routes call,
 * step by step as a client would, so its events and notify calls are those of that client.
 */
/** A new customer's email of the overrides that holds a card number. */
const scenarioCustomerViolations = (body: unknown): Violation[] => {
  const customer = typeof body === 'object' && body !== null ? (body as { customer?: unknown }).customer : undefined
  return typeof customer === 'object' ? customerBodyViolations(customer, 'customer.email') : []
}

/**
 * The rules of a run's overrides that their schema cannot state and that need no lookup, named
 * with the schema's own problems when it refuses them (a notify host name waits for the run).
 */
export function scenarioBodyViolations(body: unknown, livemode?: boolean, allow?: NotifyAllowList): Violation[] {
  const violations = [...chargeBodyViolations(body, livemode), ...scenarioCustomerViolations(body)]
  const notify = typeof body === 'object' && body !== null ? (body as { notify?: unknown }).notify : undefined
  if (livemode !== undefined && typeof notify === 'string') {
    const verdict = notifyAddressWithoutLookup(notify, livemode, allow)
    if ('problem' in verdict && verdict.problem) {
      violations.push({ code: 'parameter_invalid', param: 'notify', msg: `notify ${verdict.problem}` })
    }
  }
  return violations
}

export function scenarioService(deps: ScenarioDeps) {
  const { sources, customers, charges } = deps
  const payerTimeoutMs = deps.payerTimeoutMs ?? DEFAULT_PAYER_TIMEOUT_MS
  // charge.payment_expired's move of the test clock: just past the payer timeout
  const expiryMove = Math.ceil(payerTimeoutMs / 1000) + 1

  function testModeOnly(scope: Scope, route: string) {
    if (scope.livemode) throw new AppError('route_missing', `No route ${route}`)
  }

  function list(scope: Scope): ScenarioView[] {
    testModeOnly(scope, 'GET /v2/test/scenarios')
    return SCENARIOS.map(viewOf)
  }

  /** Every problem of the overrides, found before anything is made. */
  async function check(scope: Scope, def: ScenarioDefinition, input: ScenarioOverridesInput) {
    const violations: Violation[] = []
    for (const name of OVERRIDES) {
      if (input[name] !== undefined && !def.overrides.includes(name)) {
        violations.push({ code: 'parameter_unknown', param: name, msg: `${name} does not apply to ${def.name}` })
      }
    }
    violations.push(...chargeBodyViolations(input))
    violations.push(...scenarioCustomerViolations(input))
    if (def.name === 'charge.partially_refunded' && (input.amount ?? 2) < 2) {
      violations.push({ code: 'parameter_invalid', param: 'amount', msg: 'amount must be at least 2 to refund part' })
    }
    if (input.notify !== undefined) {
      const problem = await deps.checkNotifyAddress(input.notify, scope.livemode)
      if (problem) violations.push({ code: 'parameter_invalid', param: 'notify', msg: `notify ${problem}` })
    }
    const [first, ...rest] = violations
    if (first) throw invalidParams([first, ...rest])
    if (typeof input.customer === 'string') {
      await customers.get(scope, input.customer).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'resource_missing') {
          throw new AppError('resource_missing', `No such customer: '${input.customer}'`, { param: 'customer' })
        }
        throw err
      })
    }
  }

  /**
   * A run that moves the test clock needs the room to: found before its charge is made, which a
   * clock stopped at its limit would otherwise leave waiting for its payer.
   */
  async function checkClockRoom(scope: Scope, def: ScenarioDefinition) {
    if (def.name !== 'charge.payment_expired') return
    const ahead = (await deps.testClock.read(scope)).offset_seconds
    if (ahead + expiryMove > MAX_CLOCK_OFFSET_SECONDS) {
      throw new AppError(
        'request_invalid',
        `${def.name} moves the test clock ${expiryMove} seconds forward, but the clock runs at most ${MAX_CLOCK_OFFSET_SECONDS} seconds (100 years) ahead and is ${ahead} seconds ahead now`,
      )
    }
  }

  /**
   * `claim`: the run's Idempotency-Key, as kept (`key`) and as the objects a request makes are
   * marked with (`requestKey`). Each step is made with a key of its own derived from it, so that a
   * retry of a run whose answer was lost finds what each step made and carries on from there.
   */
  async function run(
    scope: Scope,
    name: string,
    input: ScenarioOverridesInput,
    urls: ScenarioUrls,
    claim?: { key: string; requestKey: string },
  ): Promise<ScenarioRunView> {
    testModeOnly(scope, `POST /v2/test/scenarios/${name}`)
    const def = scenarioNamed(name)
    if (!def) throw new AppError('resource_missing', `No such scenario: '${name}'`, { param: 'name' })
    await check(scope, def, input)
    await checkClockRoom(scope, def)

    const amount = input.amount ?? 1000
    const chargeFields = {
      amount,
      currency: input.currency ?? 'usd',
      ...(input.metadata ? { metadata: input.metadata } : {}),
    }
    const redirect = input.notify ? { ...SCENARIO_REDIRECT, notify: input.notify } : undefined
    const objects: Objects = {}
    /** the key of a step of this run; a step made more than once is told apart by its count */
    const made = new Map<string, number>()
    const stepKey = (step: string): string | undefined => {
      if (!claim) return undefined
      const count = (made.get(step) ?? 0) + 1
      made.set(step, count)
      return `${claim.requestKey}/${step}/${count}`
    }

    /**
     * The customer a source is attached to. One made here is named after the source (its id's
     * random part), so that a deterministic account's replay makes the same customer.
     */
    const customer = async (src: SourceView): Promise<CustomerView> => {
      const given = input.customer
      if (typeof given === 'string') return customers.get(scope, given)
      // its hex digits spelt as letters: twelve digits in a row could read as a card number
      const name = [...src.id.slice(-12)].map((c) => String.fromCharCode(97 + Number.parseInt(c, 16))).join('')
      const email = `scenario.${name}@example.com`
      return customers.create(scope, given ?? { email, description: 'Scenario customer' }, stepKey('customer'))
    }

    const source = async (body: CreateSourceInput): Promise<SourceView> => {
      const src = await sources.create(scope, body, stepKey('source'))
      objects.source = src
      return src
    }
    // valid three years past the account's time, which the simulator checks the expiry against
    const card = async (number: string) =>
      source({
        type: 'card',
        card: {
          name: 'Scenario Payer',
          number,
          exp_month: '12',
          exp_year: String(Number((await deps.testClock.read(scope)).now.slice(0, 4)) + 3),
          cvc: '123',
        },
        ...(redirect ? { redirect } : {}),
      })

    /** A source attached to the customer, as POST /v2/customers/:id/sources does. */
    const attach = async (src: SourceView): Promise<string> => {
      const cus = await customer(src)
      objects.customer = cus
      await customers.attach(scope, cus.id as string, src.id, stepKey('attach'))
      return cus.id as string
    }

    const charge = (fields: Partial<CreateChargeInput> & { source: string }) =>
      charges.create(scope, { ...chargeFields, ...fields }, urls.create, stepKey('charge'))

    /** A card charge; with a customer given, on the card attached to it first. */
    const cardCharge = async (number: string, capture = true): Promise<ChargeView> => {
      const src = await card(number)
      const owner = input.customer !== undefined ? await attach(src) : undefined
      return charge({ source: src.id, capture, ...(owner ? { customer: owner } : {}) })
    }

    /** The payer's answer on the hosted page, through what its form posts to. */
    const payerAnswers = async (pending: ChargeView, approve: boolean): Promise<ChargeView> => {
      // answered already, by the run this one is a retry of
      if (!pending.source.action) return pending
      const answered = await charges.hostedAnswer(pending.id, tokenOf(pending), approve, urls.payer)
      if (!answered) throw new Error(`the hosted page of ${pending.id} did not open`)
      return answered.charge
    }

    const refund = async (amount?: number) => {
      const paid = await cardCharge(SUCCEEDING_CARD)
      const refunded = await charges.refund(scope, paid.id, amount === undefined ? {} : { amount }, stepKey('refund'))
      // the charge is this run's: its one refund is the one just made, or made by the run retried
      objects.refund = refunded.refunds.at(-1)
      return refunded
    }

    switch (def.name) {
      case 'charge.succeeded':
        objects.charge = await cardCharge(SUCCEEDING_CARD)
        break
      case 'charge.captured':
        objects.charge = await charges.capture(
          scope,
          (await cardCharge(SUCCEEDING_CARD, false)).id,
          undefined,
          stepKey('capture'),
        )
        break
      case 'charge.voided':
        objects.charge = await charges.void(scope, (await cardCharge(SUCCEEDING_CARD, false)).id, stepKey('void'))
        break
      case 'charge.failed':
        objects.charge = await cardCharge(DECLINE_CARDS[input.decline_code ?? 'card_declined'])
        break
      case 'charge.refunded':
        objects.charge = await refund()
        break
      case 'charge.partially_refunded':
        objects.charge = await refund(Math.floor(amount / 2))
        break
      case 'charge.3ds_approved':
      case 'charge.3ds_declined': {
        const pending = await charge({ source: (await card(THREE_D_SECURE_CARD)).id })
        objects.charge = await payerAnswers(pending, def.name === 'charge.3ds_approved')
        break
      }
      case 'charge.payment_expired': {
        const pending = await charge({ source: (await card(THREE_D_SECURE_CARD)).id })
        // the run's own key: a clock's advances are kept with the key's record
        objects.test_clock = await deps.testClock.advance(scope, expiryMove, claim?.key)
        objects.charge = await expired(scope, pending.id)
        break
      }
      case 'charge.otp_verified': {
        const src = await source({ type: 'transfer_a', redirect: redirect ?? SCENARIO_REDIRECT })
        const owner = await attach(src)
        const linking = await charge({ source: src.id, customer: owner })
        objects.linking_charge = await payerAnswers(linking, true)
        const pending = await charge({ source: src.id, customer: owner })
        const confirmation = pending.source.action?.confirmation_id ?? ''
        objects.charge = pending.source.action
          ? await charges.verify(
              scope,
              pending.id,
              { confirmation_id: confirmation, otp: TEST_OTP_SUCCEEDS },
              urls.payer,
            )
          : pending
        break
      }
      case 'customer.source_attached':
        await attach(await card(SUCCEEDING_CARD))
        break
    }

    // the source and customer as they are now: used, vaulted, attached
    if (objects.source) objects.source = await sources.get(scope, objects.source.id)
    if (objects.customer) objects.customer = await customers.get(scope, objects.customer.id as string)
    return { object: 'scenario_run', scenario: def.name, objects }
  }

  /**
   * The charge once the recovery sweep has failed it: this sweep's step runs here, so the answer
   * does not wait for the next interval; a sweep of another process may take the charge first.
   */
  async function expired(scope: Scope, id: string): Promise<ChargeView> {
    const until = Date.now() + EXPIRY_WAIT_MS
    for (;;) {
      const now = await charges.get(scope, id)
      if (now.status !== 'pending' || Date.now() > until) return now
      if ((await charges.expireAbandoned(payerTimeoutMs)) === 0) await sleep(25)
    }
  }

  return { list, run }
}

export type ScenarioService = ReturnType<typeof scenarioService>
