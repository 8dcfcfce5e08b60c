import { errorOf, JackdawError } from './errors.js'

/** One message of a server-sent event stream. */
export interface StreamMessage {
  id?: string
  event?: string
  /** absent when the message has no data line: it is no event, only an id or a retry delay to keep */
  data?: string
  /** the reconnection delay the server asked for, in milliseconds */
  retry?: number
}

/**
 * The messages of a text/event-stream body, as the HTML standard reads them: `field: value`
 * lines, a blank line ending a message, lines beginning with `:` ignored. A message without data
 * comes too when it has an id or a retry delay: as with EventSource, a reconnect sends that id.
 */
export async function* readStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamMessage> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let message: StreamMessage = {}
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      let end = buffer.search(/\r\n|\r|\n/)
      while (end >= 0) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1))
        end = buffer.search(/\r\n|\r|\n/)
        if (line === '') {
          if (message.data !== undefined || message.id !== undefined || message.retry !== undefined) yield message
          message = {}
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
        if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`
        else if (field === 'id') message.id = value
        else if (field === 'event') message.event = value
        else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value)
      }
    }
  } finally {
    reader.releaseLock()
    await body.cancel().catch(() => {})
  }
}

export interface StreamOptions {
  /** start after this event, as a reconnect would */
  lastEventId?: string
  signal?: AbortSignal
  /**
   * called each time the stream's answer has come, the first time and after each reconnect: every
   * event recorded from then on comes
   */
  onOpen?: () => void
  /** called after a dropped connection, before the stream opens again after its last event */
  onReconnect?: (lastEventId: string | undefined, error: unknown) => void
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })

/**
 * The events of a server-sent event stream, each message's data as JSON. `connect` opens it,
 * after the given event when there is one; a dropped connection, or an answer `retried` accepts,
 * is opened again after the last event received, so none is missed, and an event that comes again
 * is skipped. Any other error answer ends it.
 */
export async function* resumingStream<T>(
  connect: (lastEventId: string | undefined) => Promise<Response>,
  retried: (status: number) => boolean,
  opts: StreamOptions,
): AsyncGenerator<T> {
  let last = opts.lastEventId
  // the id a stream begins after (the caller's, or the one a new stream names): the events up to
  // it came before, and a reconnect's look-back that sends one again is not to pass it on
  let begin = opts.lastEventId
  let delay = 1000
  const seen = new Set<string>()
  for (;;) {
    let failure: unknown
    try {
      const res = await connect(last)
      if (!res.ok || !res.body) {
        if (!retried(res.status)) throw errorOf(res, await res.text())
        failure = new Error(`HTTP ${res.status}`)
      } else {
        opts.onOpen?.()
        for await (const message of readStream(res.body)) {
          if (message.retry !== undefined) delay = message.retry
          if (!message.id) continue
          if (message.data === undefined) {
            last = begin = message.id
            continue
          }
          if (seen.has(message.id) || (begin !== undefined && message.id <= begin)) continue
          seen.add(message.id)
          // the ids a reconnect can send again are those just before the last one
          if (seen.size > 10_000) seen.delete(seen.values().next().value as string)
          last = message.id
          yield JSON.parse(message.data) as T
        }
        failure = new Error('the stream ended')
      }
    } catch (err) {
      if (err instanceof JackdawError || opts.signal?.aborted) throw err
      failure = err
    }
    opts.onReconnect?.(last, failure)
    await sleep(delay, opts.signal)
  }
}
