import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import {
  checkNotifyAddress,
  isPublicAddress,
  type NotifyHostResolver,
  systemResolver,
} from '../services/notify-address.js'
import { SIGNATURE_HEADER, sign } from './signature.js'

export interface SendResult {
  /** the HTTP status answered, or null when no answer came */
  statusCode: number | null
  /** why no answer came, or null */
  error: string | null
  durationMs: number
}

export interface SendRequest {
  url: string
  body: string
  headers: Record<string, string>
  timeoutMs: number
  /** live mode: refuse addresses that are not public, at the moment of connecting */
  livemode: boolean
  /** how live hosts are resolved; the system's name servers unless given */
  resolver?: NotifyHostResolver | undefined
}

const MAX_ERROR_LENGTH = 500

/** The headers of a notify call of `payload`, signed with the webhook secret of its mode. */
export function notifyHeaders(payload: string, secret: string, deliveryId?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Jackdaw-Notify/1',
    [SIGNATURE_HEADER]: sign(payload, secret),
    ...(deliveryId ? { 'Jackdaw-Delivery': deliveryId } : {}),
  }
}

/**
 * Resolves a host and refuses it unless every address is public. Connecting to the address this
 * returns, rather than resolving again, leaves no gap for the name to change between the check
 * and the connection. The live resolver asks DNS within a time limit (NotifyHostResolver).
 */
function publicOnlyLookup(resolver: NotifyHostResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver.addresses(hostname).then(
      (found) => {
        const addresses =
          options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found
        const refused = addresses.find((a) => !isPublicAddress(a.address))
        const first = addresses[0]
        if (refused || !first) {
          const e = Object.assign(
            new Error(
              `address refused: ${hostname} resolves to ${refused?.address ?? 'nothing'}, not a public address`,
            ),
            { code: 'ENOTPUBLIC' },
          )
          return callback(e, '', 4)
        }
        if (options.all) return (callback as (e: null, a: typeof addresses) => void)(null, addresses)
        callback(null, first.address, first.family)
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    )
  }
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  const text = e?.message || String(err)
  const withCode = e?.code && !text.includes(e.code) ? `${e.code}: ${text}` : text
  return withCode.slice(0, MAX_ERROR_LENGTH)
}

/**
 * POSTs one notify call. Settles when the status line arrives, on an error, or at the timeout,
 * whichever is first; never rejects. The response body is read and dropped so the connection can
 * close, but only until the same timeout.
 */
export async function postNotify(req: SendRequest): Promise<SendResult> {
  const started = performance.now()
  const elapsed = () => performance.now() - started
  if (req.livemode) {
    const problem = await checkNotifyAddress(req.url, true, req.resolver ?? systemResolver)
    if (problem) return { statusCode: null, error: `address refused: ${problem}`, durationMs: elapsed() }
  }
  let url: URL
  try {
    url = new URL(req.url)
  } catch {
    return { statusCode: null, error: 'the notify address is not a URL', durationMs: elapsed() }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { statusCode: null, error: 'the notify address is not http or https', durationMs: elapsed() }
  }
  const transport = url.protocol === 'https:' ? https : http
  return new Promise<SendResult>((resolve) => {
    let settled = false
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return
      settled = true
      resolve({ statusCode, error, durationMs: elapsed() })
    }
    const request = transport.request(url, {
      method: 'POST',
      headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
      // one connection per call: a pooled socket would outlive the address check it passed
      agent: false,
      ...(req.livemode ? { lookup: publicOnlyLookup(req.resolver ?? systemResolver) } : {}),
    })
    const timer = setTimeout(() => {
      finish(null, `timeout: no response within ${req.timeoutMs} ms`)
      request.destroy()
    }, req.timeoutMs)
    request.on('response', (res) => {
      finish(res.statusCode ?? null, null)
      res.on('error', () => {})
      res.on('end', () => clearTimeout(timer))
      res.resume()
    })
    request.on('error', (err) => {
      clearTimeout(timer)
      finish(null, describe(err))
    })
    request.on('close', () => {
      clearTimeout(timer)
      finish(null, 'the connection closed before a response')
    })
    request.end(req.body)
  })
}
