import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import {
  NotifyAllowList,
  type NotifyHostRefused,
  type NotifyHostResolver,
  permittedAddresses,
  type ResolvedAddress,
  systemResolver,
} from '../services/notify-address.js'
import { SIGNATURE_HEADER, sign } from './signature.js'

/**
 * Why an attempt got no proper answer, as a class: the deliveries list shows it to whoever holds
 * the account's keys, and a socket's own message (which names addresses, ports and what answered
 * there) would tell them about the network the service runs in.
 */
export type SendError =
  | 'address_refused'
  | 'dns'
  | 'connect_timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'connection_closed'
  | 'unreachable'
  | 'tls'
  | 'invalid_response'
  | 'timeout'
  | 'http_status'
  | 'invalid_url'
  | 'network_error'
  /** the call was not made: the account is gone, or its secret could not be read */
  | 'not_sent'

export interface SendResult {
  /** the HTTP status answered, or null when no answer came */
  statusCode: number | null
  /** why the attempt failed (null when a 2xx came) */
  error: SendError | null
  durationMs: number
}

export interface SendRequest {
  url: string
  body: string
  headers: Record<string, string>
  /** how long the receiver has for the whole call, connection included */
  timeoutMs: number
  /** how long the connection may take to open (default 3000) */
  connectTimeoutMs?: number | undefined
  /** how hosts are resolved; the system's name servers unless given */
  resolver?: NotifyHostResolver | undefined
  /** receivers called besides public addresses (JACKDAW_NOTIFY_ALLOW_HOSTS); none unless given */
  allow?: NotifyAllowList | undefined
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000

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
 * Serves the connection the addresses resolved and checked before the call, rather than resolving
 * again: no gap is left for a name to change between the check and the connection.
 */
function checkedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const fit =
      options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
    const first = fit[0]
    if (!first) return callback(Object.assign(new Error('no address of that family'), { code: 'ENOTFOUND' }), '', 4)
    if (options.all) return (callback as (e: null, a: ResolvedAddress[]) => void)(null, fit)
    callback(null, first.address, first.family)
  }
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_)|_CERT|HOSTNAME_MISMATCH/

/** The class of a connection's or request's error. */
function classOf(err: unknown): SendError {
  const code = String((err as NodeJS.ErrnoException)?.code ?? '')
  if (code === 'ECONNREFUSED') return 'connection_refused'
  // Node's names for a connection the receiver ended, without a reset, before any answer (over
  // TLS, before the handshake ended)
  const message = (err as Error).message
  if (
    code === 'ECONNRESET' &&
    (message === 'socket hang up' || message.startsWith('Client network socket disconnected'))
  )
    return 'connection_closed'
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset'
  // OpenSSL's error for a handshake that failed, as when an https address answers plain HTTP
  if (code === 'EPROTO') return 'tls'
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') return 'unreachable'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns'
  if (code.startsWith('HPE_')) return 'invalid_response'
  if (TLS_CODE.test(code)) return 'tls'
  return 'network_error'
}

/**
 * POSTs one notify call to a public address, or one the operator allows, in both modes. Settles
 * when the status line arrives, on an error, or at a timeout (of the connection, then of the whole
 * call), whichever is first; never rejects. The response body is read and dropped so the
 * connection can close, but only until the same timeout.
 */
export async function postNotify(req: SendRequest): Promise<SendResult> {
  const started = performance.now()
  const failed = (error: SendError): SendResult => ({
    statusCode: null,
    error,
    durationMs: performance.now() - started,
  })
  let url: URL
  try {
    url = new URL(req.url)
  } catch {
    return failed('invalid_url')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return failed('invalid_url')
  let addresses: ResolvedAddress[]
  try {
    addresses = await permittedAddresses(
      url.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
      req.resolver ?? systemResolver,
      req.allow ?? NotifyAllowList.none,
    )
  } catch (err) {
    return failed((err as NotifyHostRefused).reason ?? 'dns')
  }
  const transport = url.protocol === 'https:' ? https : http
  const connectTimeoutMs = req.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
  return new Promise<SendResult>((resolve) => {
    let settled = false
    let connecting: NodeJS.Timeout | undefined
    const finish = (statusCode: number | null, error: SendError | null) => {
      clearTimeout(connecting)
      if (settled) return
      settled = true
      resolve({ statusCode, error, durationMs: performance.now() - started })
    }
    const request = transport.request(url, {
      method: 'POST',
      headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
      // one connection per call: a pooled socket would outlive the address check it passed
      agent: false,
      lookup: checkedLookup(addresses),
    })
    // a receiver that does not accept the connection is given up on soon, whatever the call's
    // timeout: a host that drops connections would otherwise hold a call's slot for all of it.
    // A call whose whole timeout is no longer has that one only.
    if (connectTimeoutMs < req.timeoutMs) {
      connecting = setTimeout(() => {
        finish(null, 'connect_timeout')
        request.destroy()
      }, connectTimeoutMs)
    }
    request.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connecting)
      else socket.once('connect', () => clearTimeout(connecting))
    })
    const timer = setTimeout(() => {
      finish(null, 'timeout')
      request.destroy()
    }, req.timeoutMs)
    request.on('response', (res) => {
      const status = res.statusCode ?? null
      finish(status, status !== null && status >= 200 && status < 300 ? null : 'http_status')
      res.on('error', () => {})
      res.on('end', () => clearTimeout(timer))
      res.resume()
    })
    request.on('error', (err) => {
      clearTimeout(timer)
      finish(null, classOf(err))
    })
    request.on('close', () => {
      clearTimeout(timer)
      finish(null, 'connection_closed')
    })
    request.end(req.body)
  })
}
