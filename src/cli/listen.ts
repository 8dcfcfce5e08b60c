import { createClient, type Event } from '../client/api.js'
import { notifyHeaders, postNotify } from '../notify/send.js'
import { NotifyAllowList } from '../services/notify-address.js'

export interface ListenOptions {
  forwardTo: string
  apiUrl: string
  key: string
  /** event types to forward; all when empty */
  events: string[]
  /** how long the local receiver has to answer */
  timeoutMs?: number
  out?: (line: string) => void
  signal?: AbortSignal
}

/** The service's address as `listen` and other client commands find it. */
export function apiUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return flag ?? env.JACKDAW_API_URL ?? `http://127.0.0.1:${env.PORT || '8080'}`
}

/**
 * Why `--forward-to` is no address to forward to, if it is none: it must be an http or https URL
 * whose host is a host name or an address (not `a..b`, not `*.example.com`).
 */
export function forwardToProblem(forwardTo: string): string | undefined {
  const target = URL.canParse(forwardTo) ? new URL(forwardTo) : undefined
  if (target?.protocol !== 'http:' && target?.protocol !== 'https:') {
    return `--forward-to must be an http or https URL, not ${JSON.stringify(forwardTo)}`
  }
  try {
    forwardHostOf(target)
    return undefined
  } catch {
    return `--forward-to must name a host by its name or address, not ${JSON.stringify(target.hostname)}`
  }
}

/** The event types `--events` lists, comma-separated; throws, naming the types there are, on one no event has. */
export async function eventTypesOf(list: string | undefined): Promise<string[]> {
  // loaded here, not with this module, which the command line imports whatever the command
  const { EVENT_TYPES } = await import('../schemas/event.js')
  const events = (list ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
  const unknown = events.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e))
  if (unknown.length > 0) {
    throw new Error(`no event has the type ${unknown.join(', ')}; the types: ${EVENT_TYPES.join(', ')}`)
  }
  return events
}

/** The receiver listen forwards to, the one allowed however private; throws when its host is no host name or address. */
function forwardHostOf(url: URL): NotifyAllowList {
  // as one entry: a comma, which a URL's host may hold, would otherwise make it two
  return NotifyAllowList.parse([url.hostname])
}

const clock = (d: Date) => d.toISOString().slice(11, 23)

/**
 * `jackdaw listen`: streams the account's events (GET /v2/events/stream) and forwards each to a
 * local address as the service's notify call would be made: the same body and signature, with the webhook secret of the key's mode, which it prints first. A dropped stream
 * resumes after the last event, or where it began when none came yet, so none is missed.
 */
export async function listen(opts: ListenOptions): Promise<void> {
  const out = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`))
  // the receiver is the one the developer named, usually on this machine: it alone is allowed.
  // The command line checked its URL (forwardToProblem)
  const forwardHost = forwardHostOf(new URL(opts.forwardTo))
  const client = createClient({ apiKey: opts.key, baseUrl: opts.apiUrl })
  const account = await client.me.retrieve()
  const wanted = new Set(opts.events)
  out(`Forwarding the ${account.livemode ? 'live' : 'test'}-mode events of ${account.name} (${account.id})`)
  out(`  from ${opts.apiUrl} to ${opts.forwardTo}${wanted.size ? `, only ${[...wanted].join(', ')}` : ''}`)
  out(`Signing secret: ${account.webhook_secret}  (Jackdaw-Signature, as on notify calls)`)

  let ready = false
  const events = client.events.stream({
    signal: opts.signal,
    // until the service has the stream's request, an event made would not come: "Ready" waits for it
    onOpen: () => {
      if (!ready) out('Ready. Press Ctrl-C to stop.')
      ready = true
    },
    onReconnect: (last, err) =>
      out(`${clock(new Date())}  connection lost (${(err as Error)?.message ?? err}); resuming after ${last ?? 'now'}`),
  })
  try {
    for await (const event of events) await forward(event)
  } catch (err) {
    if (opts.signal?.aborted) return
    throw err
  }

  async function forward(event: Event) {
    if (wanted.size && !wanted.has(event.type)) return
    const body = JSON.stringify(event)
    const started = new Date()
    const result = await postNotify({
      url: opts.forwardTo,
      body,
      headers: notifyHeaders(body, account.webhook_secret),
      timeoutMs: opts.timeoutMs ?? 10_000,
      allow: forwardHost,
    })
    const answer = result.statusCode !== null ? `[${result.statusCode}]` : `[failed: ${result.error}]`
    out(`${clock(started)}  ${event.type.padEnd(22)} ${event.id}  -> ${answer} ${Math.round(result.durationMs)} ms`)
  }
}
