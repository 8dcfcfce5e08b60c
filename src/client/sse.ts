/** One message of a server-sent event stream. */
export interface StreamMessage {
  id?: string
  event?: string
  data: string
  /** the reconnection delay the server asked for, in milliseconds */
  retry?: number
}

/**
 * The messages of a text/event-stream body, as the HTML standard reads them: `field: value`
 * lines, a blank line ending a message, lines beginning with `:` ignored.
 */
export async function* readStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamMessage> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let message: StreamMessage = { data: '' }
  let hasData = false
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
          if (hasData) yield message
          message = { data: '' }
          hasData = false
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
        if (field === 'data') {
          message.data = hasData ? `${message.data}\n${value}` : value
          hasData = true
        } else if (field === 'id') message.id = value
        else if (field === 'event') message.event = value
        else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value)
      }
    }
  } finally {
    reader.releaseLock()
    await body.cancel().catch(() => {})
  }
}
