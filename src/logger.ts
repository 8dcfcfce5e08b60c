import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import type { Config } from './config.js'
import { withoutCardNumbers } from './errors.js'

/** `value` with withoutCardNumbers applied to every text in it, at any depth. */
function withoutCardNumbersIn<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return withoutCardNumbers(value) as T
  if (depth > 8 || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((v) => withoutCardNumbersIn(v, depth + 1)) as T
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutCardNumbersIn(v, depth + 1)])) as T
}

/** The service's logger; `destination` (standard output when absent) lets tests read what it writes. */
export function makeLogger(config: Pick<Config, 'LOG_LEVEL'>, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: config.LOG_LEVEL,
    // a request is logged without its query string (a hosted page's token travels there), and
    // without anything in its path that looks like a card number (sent where an id goes)
    serializers: {
      req: (req: { id?: string; method?: string; url?: string }) => ({
        id: req.id,
        method: req.method,
        url: withoutCardNumbers(String(req.url ?? '').split('?')[0] ?? ''),
      }),
      // an error's text is not the service's alone: a connector's, the driver's or a library's may
      // repeat what it was given, a card number among it
      err: (err: Error) => withoutCardNumbersIn(pino.stdSerializers.err(err)),
    },
    // request bodies are never logged; these paths guard any object that might carry one
    redact: {
      paths: ['req.headers.authorization', '*.card.number', '*.card.cvc', '*.number', '*.cvc'],
      censor: '[redacted]',
    },
  }
  if (destination) return pino(options, destination)
  // lines for a person at a terminal; JSON, one object a line, for anything that reads the output
  if (process.stdout.isTTY) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
      },
    })
  }
  return pino(options)
}
