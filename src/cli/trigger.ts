import { createClient, type ScenarioOverrides, type ScenarioRun } from '../client/api.js'

export interface TriggerOptions {
  apiUrl: string
  key: string
  /** the scenario to run; absent with `list` */
  scenario?: string | undefined
  list?: boolean | undefined
  overrides: ScenarioOverrides
  /** print the whole answer as JSON */
  json?: boolean | undefined
  out?: (line: string) => void
}

/** `--metadata k=v` pairs as a charge's metadata; a pair without `=` is refused. */
export function metadataOf(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined
  const metadata: Record<string, string> = {}
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    if (at <= 0) throw new Error(`--metadata takes key=value, not '${pair}'`)
    metadata[pair.slice(0, at)] = pair.slice(at + 1)
  }
  return metadata
}

/** `--customer`: a customer id, or a new customer as a JSON object. */
export function customerOf(value: string | undefined): ScenarioOverrides['customer'] {
  if (value === undefined) return undefined
  if (!value.trim().startsWith('{')) return value
  try {
    return JSON.parse(value)
  } catch {
    throw new Error('--customer takes a customer id (cus_…) or a JSON object such as {"email": …, "description": …}')
  }
}

/** The overrides `trigger`'s options give, those not given left out; throws, naming the option, on one ill formed. */
export function overridesOf(options: {
  amount?: string | undefined
  currency?: string | undefined
  metadata?: string[] | undefined
  'decline-code'?: string | undefined
  customer?: string | undefined
  notify?: string | undefined
}): ScenarioOverrides {
  const { amount } = options
  if (amount !== undefined && !/^\d{1,15}$/.test(amount)) throw new Error('--amount must be a whole number')
  const overrides = {
    amount: amount === undefined ? undefined : Number(amount),
    currency: options.currency,
    metadata: metadataOf(options.metadata ?? []),
    decline_code: options['decline-code'] as never,
    customer: customerOf(options.customer),
    notify: options.notify,
  }
  return JSON.parse(JSON.stringify(overrides))
}

const ORDER = ['customer', 'source', 'linking_charge', 'charge', 'refund', 'test_clock'] as const

/** One line per object a run made: its kind and id (a charge with its outcome, the clock with its time). */
export function linesOf(run: ScenarioRun): string[] {
  const o = run.objects
  const lines: string[] = []
  for (const kind of ORDER) {
    const object = o[kind]
    if (!object) continue
    let text: string
    if (kind === 'test_clock' && o.test_clock) text = `${o.test_clock.now} (offset ${o.test_clock.offset_seconds} s)`
    else if ((kind === 'charge' || kind === 'linking_charge') && 'status' in object) {
      const charge = o[kind]
      const failure = charge?.failure_data ? ` (${charge.failure_data.code})` : ''
      text = `${charge?.id}  ${charge?.status}${failure}`
    } else text = (object as { id?: string }).id ?? ''
    lines.push(`${kind.padEnd(15)} ${text}`)
  }
  return lines
}

/**
 * `jackdaw trigger`: runs a test-mode scenario through the service's API (POST
 * /v2/test/scenarios/:name) and prints the ids of what it made, or lists the scenarios.
 */
export async function trigger(opts: TriggerOptions): Promise<void> {
  const out = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`))
  const client = createClient({ apiKey: opts.key, baseUrl: opts.apiUrl })
  if (opts.list) {
    const { data } = await client.scenarios.list()
    if (opts.json) return out(JSON.stringify(data, null, 2))
    for (const s of data) {
      out(`${s.name}`)
      out(`    ${s.description}`)
      out(`    overrides: ${s.overrides.map((o) => `--${o.name.replace('_', '-')} (${o.type})`).join(', ') || 'none'}`)
    }
    return
  }
  const run = await client.scenarios.run(opts.scenario as string, opts.overrides)
  if (opts.json) return out(JSON.stringify(run, null, 2))
  for (const line of linesOf(run)) out(line)
}
