import { AsyncLocalStorage } from 'node:async_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { AppError, problemsMessage, type ValidationDetail } from '../errors.js'
import { type Processor, ProcessorError } from '../processor/processor.js'
import {
  FAULT_HEADER,
  FAULT_NAMES,
  FAULT_OPERATIONS,
  type FaultName,
  type FaultOperation,
  type FaultRuleInput,
  MAX_FAULT_LATENCY_MS,
  PROCESSOR_FAULTS,
  PROCESSOR_OPERATIONS,
} from '../schemas/test-faults.js'
import type { Db } from '../store/db.js'
import type { Scope } from '../store/scope.js'
import { replaceTestFaultRules, testFaultRules } from '../store/test-faults.js'

/** One fault a test-mode request is given, by the Jackdaw-Test-Fault header or by a rule. */
export interface TestFault {
  name: FaultName
  /** processor_latency: how long the processor takes */
  latencyMs?: number | undefined
}

export interface TestFaults {
  object: 'test_faults'
  rules: FaultRuleInput[]
}

/** The fault of the request whose work is under way, for the processor it calls. */
const activeFault = new AsyncLocalStorage<TestFault>()

/** Runs `fn`, and all it sets off, as the work of a request given `fault`. */
export function runWithFault<T>(fault: TestFault, fn: () => T): T {
  return activeFault.run(fault, fn)
}

/**
 * The test-mode processor as the faults of the request at hand make it: a timeout or an
 * unavailable processor raises the errors a real one's would, so the charge is decided, recorded
 * and recovered as after a real fault; a latency holds the call back. Reversals are never
 * faulted: they are owed by the service, not asked for by a request.
 */
export function faultableProcessor(inner: Processor): Processor {
  async function call<T>(send: () => Promise<T>): Promise<T> {
    const fault = activeFault.getStore()
    if (fault?.name === 'processor_timeout') {
      throw new ProcessorError('timeout', 'the processor did not answer in time (test fault processor_timeout)')
    }
    if (fault?.name === 'processor_unavailable') {
      throw new ProcessorError('unavailable', 'the processor could not be reached (test fault processor_unavailable)')
    }
    if (fault?.name === 'processor_latency' && fault.latencyMs) await sleep(fault.latencyMs)
    return send()
  }
  return {
    get decidesInProcess() {
      return inner.decidesInProcess
    },
    authorize: (req) => call(() => inner.authorize(req)),
    completeStep: (req, reference, step, answer) => call(() => inner.completeStep(req, reference, step, answer)),
    capture: (reference, amount, currency) => call(() => inner.capture(reference, amount, currency)),
    void: (reference) => call(() => inner.void(reference)),
    refund: (reference, amount, currency, refundId) => call(() => inner.refund(reference, amount, currency, refundId)),
    reverse: (chargeId) => inner.reverse(chargeId),
  }
}

const headerInvalid = (message: string) => new AppError('header_invalid', message, { param: FAULT_HEADER })

/** The fault a Jackdaw-Test-Fault header asks for: one name, or processor_latency=<ms>. */
export function parseFaultHeader(value: string): TestFault {
  const [name = '', arg, ...rest] = value.trim().split('=')
  const known = (FAULT_NAMES as readonly string[]).includes(name) ? (name as FaultName) : undefined
  if (!known) {
    throw headerInvalid(`${FAULT_HEADER} must be one of ${FAULT_NAMES.join(', ')}; processor_latency takes =<ms>`)
  }
  if (known !== 'processor_latency') {
    if (arg !== undefined) throw headerInvalid(`${FAULT_HEADER}: ${known} takes no value`)
    return { name: known }
  }
  const ms = arg === undefined || rest.length > 0 || !/^\d{1,6}$/.test(arg) ? Number.NaN : Number(arg)
  if (!(ms >= 0 && ms <= MAX_FAULT_LATENCY_MS)) {
    throw headerInvalid(`${FAULT_HEADER}: processor_latency takes =<ms>, 0 to ${MAX_FAULT_LATENCY_MS} milliseconds`)
  }
  return { name: known, latencyMs: ms }
}

/** The operation a route stands for, when a rule may name it. */
const OPERATION_OF_ROUTE = new Map<string, FaultOperation>(
  Object.entries(FAULT_OPERATIONS).map(([operation, route]) => [route, operation as FaultOperation]),
)
export const operationOfRoute = (method: string, url: string | undefined) => OPERATION_OF_ROUTE.get(`${method} ${url}`)

interface RuleViolation {
  code: 'parameter_invalid' | 'parameter_missing'
  field: string
  msg: string
}

/** What a rule breaks that the schema cannot say: which fields go together. */
function ruleViolations(rule: FaultRuleInput): RuleViolation[] {
  const found: RuleViolation[] = []
  const invalid = (field: string, msg: string) => found.push({ code: 'parameter_invalid', field, msg })
  const missing = (field: string, msg: string) => found.push({ code: 'parameter_missing', field, msg })
  if (rule.operation !== undefined && rule.notify !== undefined) {
    invalid('notify', 'cannot go with operation: a rule names an operation or notify')
  } else if (rule.operation !== undefined) {
    if (rule.fault === undefined) missing('fault', 'is required with operation')
    if (rule.seconds !== undefined) invalid('seconds', 'goes with notify only')
    if (rule.fault === 'processor_latency' && rule.latency_ms === undefined) {
      missing('latency_ms', 'is required with processor_latency')
    }
    if (rule.fault !== 'processor_latency' && rule.latency_ms !== undefined) {
      invalid('latency_ms', 'goes with processor_latency only')
    }
    if (rule.fault && PROCESSOR_FAULTS.includes(rule.fault) && !PROCESSOR_OPERATIONS.includes(rule.operation)) {
      invalid('fault', `${rule.fault} acts on a processor call: ${PROCESSOR_OPERATIONS.join(', ')}`)
    }
  } else if (rule.notify !== undefined) {
    if (rule.fault !== undefined) invalid('fault', 'goes with operation only')
    if (rule.latency_ms !== undefined) invalid('latency_ms', 'goes with processor_latency only')
    if (rule.notify === 'delay' && rule.seconds === undefined) missing('seconds', 'is required with delay')
    if (rule.notify === 'duplicate' && rule.seconds !== undefined) invalid('seconds', 'cannot go with duplicate')
  } else {
    missing('operation', 'or notify is required')
  }
  return found
}

/** A 422 for every rule's violations, shaped as the schema's own (loc holds the rule's index). */
function rulesRefused(rules: FaultRuleInput[]): AppError | undefined {
  const found = rules.flatMap((rule, i) => ruleViolations(rule).map((v) => ({ ...v, at: i })))
  const first = found[0]
  if (!first) return undefined
  const detail: ValidationDetail[] = found.map((v) => ({
    loc: ['body', 'rules', v.at, v.field],
    msg: `rules.${v.at}.${v.field} ${v.msg}`,
    type: 'value_error',
  }))
  return new AppError(first.code, problemsMessage(detail), { param: `rules.${first.at}.${first.field}`, detail })
}

/**
 * The rules an operation draws from are taken on trust this long, to spare the store a read on
 * every test-mode request; a change made in this process applies at once, one made in another
 * within this time.
 */
export const RULES_CACHE_MS = 1_000

/**
 * Each account's test-mode fault rules, kept in the store so that every process of a deployment
 * applies them. Live mode has none: its operations answer as if they did not exist.
 */
export function testFaultService(deps: { db: Db }) {
  const { db } = deps
  const cache = new Map<string, { rules: FaultRuleInput[]; until: number }>()

  function remember(accountId: string, rules: FaultRuleInput[]) {
    if (cache.size > 10_000) cache.clear()
    cache.set(accountId, { rules, until: Date.now() + RULES_CACHE_MS })
  }

  async function rulesOf(accountId: string): Promise<FaultRuleInput[]> {
    const cached = cache.get(accountId)
    if (cached && cached.until > Date.now()) return cached.rules
    const rules = await testFaultRules<FaultRuleInput>(db, accountId)
    remember(accountId, rules)
    return rules
  }

  function testModeOnly(scope: Scope, route: string) {
    if (scope.livemode) throw new AppError('route_missing', `No route ${route}`)
  }

  return {
    async read(scope: Scope): Promise<TestFaults> {
      testModeOnly(scope, 'GET /v2/test/faults')
      return { object: 'test_faults', rules: await testFaultRules<FaultRuleInput>(db, scope.accountId) }
    },

    async replace(scope: Scope, rules: FaultRuleInput[]): Promise<TestFaults> {
      testModeOnly(scope, 'PUT /v2/test/faults')
      const refused = rulesRefused(rules)
      if (refused) throw refused
      await replaceTestFaultRules(db, scope.accountId, rules)
      remember(scope.accountId, rules)
      return { object: 'test_faults', rules }
    },

    /** The fault the account's rules give one call of `operation`, drawn at their rates, if any. */
    async drawn(scope: Scope, operation: FaultOperation): Promise<TestFault | undefined> {
      if (scope.livemode) return undefined
      for (const rule of await rulesOf(scope.accountId)) {
        if (rule.operation !== operation || !rule.fault) continue
        if (Math.random() < (rule.rate ?? 1)) return { name: rule.fault, latencyMs: rule.latency_ms }
      }
      return undefined
    },
  }
}

export type TestFaultService = ReturnType<typeof testFaultService>
