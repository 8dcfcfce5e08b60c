import { existsSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { HELP } from './cli/help.js'
import { apiUrlOf, eventTypesOf, forwardToProblem, listen } from './cli/listen.js'
import { CommandError, portOf, runProcessor } from './cli/processor.js'
import { overridesOf, trigger } from './cli/trigger.js'
import { JackdawConnectionError, JackdawError } from './client/api.js'
import { AppError } from './errors.js'
import type { accountService } from './services/accounts.js'

/** Every option of the command line; TAKES says which command takes which. */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
  name: { type: 'string' },
  account: { type: 'string' },
  kind: { type: 'string' },
  mode: { type: 'string' },
  workers: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'forward-to': { type: 'string' },
  events: { type: 'string' },
  key: { type: 'string' },
  'api-url': { type: 'string' },
  list: { type: 'boolean' },
  amount: { type: 'string' },
  currency: { type: 'string' },
  metadata: { type: 'string', multiple: true },
  'decline-code': { type: 'string' },
  customer: { type: 'string' },
  notify: { type: 'string' },
} as const

/**
 * The options each command takes besides --help, as its --help names them, by the words that name
 * the command (`trigger SCENARIO` is `trigger`): another command's option is refused, not ignored.
 */
const TAKES: Record<string, readonly Exclude<keyof typeof OPTIONS, 'help'>[]> = {
  serve: ['workers'],
  'account create': ['name', 'json'],
  'account roll-key': ['account', 'kind', 'mode', 'json'],
  'webhook-secret roll': ['account', 'mode', 'json'],
  'deliveries redeliver': ['json'],
  processor: ['port', 'host'],
  listen: ['forward-to', 'events', 'key', 'api-url'],
  trigger: ['list', 'amount', 'currency', 'metadata', 'decline-code', 'customer', 'notify', 'json', 'key', 'api-url'],
}

class UsageError extends Error {}

function print(value: Record<string, unknown>, json: boolean) {
  if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
  else for (const [k, v] of Object.entries(value)) process.stdout.write(`${k}: ${v}\n`)
}

function choice<T extends string>(value: string | undefined, allowed: readonly T[], name: string): T {
  if (!value || !allowed.includes(value as T)) throw new UsageError(`--${name} must be one of: ${allowed.join(', ')}`)
  return value as T
}

/** What `read` makes of a command's options; what it throws is a usage error, an option being ill formed. */
async function fromOptions<T>(read: () => T | Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

/**
 * The store a command acts on: the service's. Without DATABASE_URL that is the data directory,
 * which must be there already: a command run from another folder would otherwise make a new store
 * of its own, and act on it unseen by the service.
 */
async function existingStore() {
  const [{ parseConfig }, { openStore }] = await Promise.all([import('./config.js'), import('./store/open.js')])
  const config = parseConfig()
  if (!config.DATABASE_URL && !existsSync(config.JACKDAW_DATA_DIR)) {
    throw new UsageError(
      `no data directory at ${path.resolve(config.JACKDAW_DATA_DIR)}: run this where the service runs, or set JACKDAW_DATA_DIR (or DATABASE_URL) to its store`,
    )
  }
  return openStore(config, { shared: true })
}

async function withAccounts<T>(fn: (accounts: ReturnType<typeof accountService>) => Promise<T>): Promise<T> {
  const accounts = await import('./services/accounts.js')
  const store = await existingStore()
  try {
    return await fn(accounts.accountService(store))
  } finally {
    await store.db.close()
  }
}

/**
 * The command line's words and options, each option one its command takes; undefined once --help
 * is answered. It needs none of the service's modules, so that a typo is told at once.
 */
function argsOf(argv: string[]) {
  const args = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS })
  // a command's words wherever its options stand: `trigger --json charge.succeeded` names the scenario
  const [command, sub] = args.positionals
  const words = [sub && `${command} ${sub}`, command].find((w) => w !== undefined && Object.hasOwn(TAKES, w))
  // a command there is none of is told so below, whatever its options
  const taken: readonly string[] = words ? (TAKES[words] ?? []) : Object.keys(OPTIONS)
  const refused = Object.keys(args.values).find((name) => name !== 'help' && !taken.includes(name))
  if (refused)
    throw new UsageError(`${words} does not take --${refused} (jackdaw ${command} --help names those it does)`)
  if (args.values.help || !command || command === 'help') {
    const topic = (command === 'help' ? sub : command) ?? 'main'
    const help = Object.hasOwn(HELP, topic) ? HELP[topic] : undefined
    if (help === undefined) throw new UsageError(`no command is named ${topic}`)
    process.stdout.write(help)
    return undefined
  }
  return args
}

async function main({ values, positionals }: NonNullable<ReturnType<typeof argsOf>>) {
  const [command, sub] = positionals
  const json = values.json ?? false

  switch (command) {
    case 'serve': {
      const workers = Number(values.workers ?? '1')
      if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new UsageError('--workers must be 1 to 64')
      const [{ parseConfig }, { serveCluster }] = await Promise.all([
        import('./config.js'),
        import('./serve-cluster.js'),
      ])
      await serveCluster(parseConfig(), workers)
      return
    }
    case 'account': {
      if (sub === 'create') {
        const name = values.name?.trim()
        if (!name || name.length > 100) throw new UsageError('--name is required (1 to 100 characters)')
        const created = await withAccounts((a) => a.create(name))
        print({ ...created }, json)
        return
      }
      if (sub === 'roll-key') {
        if (!values.account) throw new UsageError('--account is required')
        const kind = choice(values.kind, ['secret', 'public'] as const, 'kind')
        const mode = choice(values.mode, ['test', 'live'] as const, 'mode')
        const accountId = values.account
        const key = await withAccounts((a) => a.rollKey(accountId, kind, mode === 'live'))
        print({ account: accountId, kind, mode, key }, json)
        return
      }
      throw new UsageError(
        sub
          ? `unknown command: account ${sub}`
          : 'account takes a command: create or roll-key (jackdaw account --help)',
      )
    }
    case 'webhook-secret': {
      if (sub !== 'roll') {
        throw new UsageError(
          sub
            ? `unknown command: webhook-secret ${sub}`
            : 'webhook-secret takes a command: roll (jackdaw webhook-secret --help)',
        )
      }
      if (!values.account) throw new UsageError('--account is required')
      const mode = choice(values.mode, ['test', 'live'] as const, 'mode')
      const accountId = values.account
      const secret = await withAccounts((a) => a.rollWebhookSecret({ accountId, livemode: mode === 'live' }))
      print({ account: accountId, mode, webhook_secret: secret }, json)
      return
    }
    case 'deliveries': {
      const id = positionals[2]
      if (sub !== 'redeliver' || !id) throw new UsageError('usage: jackdaw deliveries redeliver DELIVERY_ID')
      const { redeliver } = await import('./notify/deliveries.js')
      const store = await existingStore()
      try {
        const delivery = await redeliver(store.db, id)
        print(json ? { ...delivery } : { id: delivery.id, status: delivery.status, url: delivery.url }, json)
      } finally {
        await store.db.close()
      }
      return
    }
    case 'processor': {
      const [{ parseConfig }, { makeLogger }] = await Promise.all([import('./config.js'), import('./logger.js')])
      const port = portOf(values.port ?? '9090')
      if (port === undefined) throw new UsageError('--port must be 0 to 65535')
      const config = parseConfig()
      const secret = config.JACKDAW_LIVE_PROCESSOR_SECRET
      if (!secret) throw new UsageError('JACKDAW_LIVE_PROCESSOR_SECRET must be set (at least 16 characters)')
      const host = values.host ?? '127.0.0.1'
      const address = await runProcessor({ secret, logger: makeLogger(config), host, port })
      process.stdout.write(`Jackdaw processor simulator listening on ${address}\n`)
      return
    }
    case 'listen': {
      const forwardTo = values['forward-to']
      if (!forwardTo) throw new UsageError('--forward-to URL is required')
      const problem = forwardToProblem(forwardTo)
      if (problem) throw new UsageError(problem)
      const key = values.key ?? process.env.JACKDAW_API_KEY
      if (!key) throw new UsageError('--key (or JACKDAW_API_KEY) is required: a secret key of the account')
      const events = await fromOptions(() => eventTypesOf(values.events))
      const controller = new AbortController()
      process.once('SIGINT', () => controller.abort())
      process.once('SIGTERM', () => controller.abort())
      await listen({
        forwardTo,
        key,
        apiUrl: apiUrlOf(values['api-url'], process.env),
        events,
        signal: controller.signal,
      })
      return
    }
    case 'trigger': {
      const key = values.key ?? process.env.JACKDAW_API_KEY
      if (!key) throw new UsageError('--key (or JACKDAW_API_KEY) is required: a secret test key of the account')
      if (!key.startsWith('sk_test_')) {
        throw new UsageError('scenarios run in test mode only: give a secret test key of the account (sk_test_…)')
      }
      if (!values.list && !sub) throw new UsageError('name a scenario (jackdaw trigger --list names them)')
      const overrides = await fromOptions(() => overridesOf(values))
      await trigger({
        apiUrl: apiUrlOf(values['api-url'], process.env),
        key,
        scenario: sub,
        list: values.list,
        overrides,
        json,
      })
      return
    }
    default:
      throw new UsageError(`unknown command: ${command}${positionals.length > 1 ? ' …' : ''}`)
  }
}

/** A usage error is told in one line, with exit 2; any other error is left to the caller. */
function exitOnUsageError(err: unknown) {
  if (
    err instanceof UsageError ||
    (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
  ) {
    process.stderr.write(`jackdaw: ${err.message}\nRun jackdaw --help for usage.\n`)
    process.exit(2)
  }
}

// the service's modules load once the command line is found good: --help and a typo take a fraction of the time
let args: ReturnType<typeof argsOf>
try {
  args = argsOf(process.argv.slice(2))
} catch (err) {
  exitOnUsageError(err)
  throw err
}
if (args) {
  const { runMain } = await import('./main.js')
  await runMain(async () => {
    try {
      await main(args)
    } catch (err) {
      if (err instanceof JackdawError || err instanceof JackdawConnectionError) {
        const said = err instanceof JackdawError ? `the service answered ${err.status}` : 'cannot reach the service'
        process.stderr.write(`jackdaw: ${said}: ${err.message}\n`)
        process.exit(1)
      }
      if (err instanceof AppError || err instanceof CommandError) {
        process.stderr.write(`jackdaw: ${err.message}\n`)
        process.exit(1)
      }
      exitOnUsageError(err)
      throw err
    }
  })
}
