import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Notify calls carry `Jackdaw-Signature: t=<unix seconds>,v1=<hex>`, where the hex is the
 * HMAC-SHA256, keyed with the account's webhook secret of the event's mode (the whole `whsec_…`
 * text, as UTF-8), of `<t>.<raw body>`.
 *
 * A receiver verifies with the raw body exactly as received, before parsing it. This file needs
 * nothing but node:crypto, so a Node receiver can copy it and call:
 *
 *   if (!verifySignature(rawBody, req.headers['jackdaw-signature'], webhookSecret)) reject with 400
 *
 * In any other language: split the header on ',' into k=v pairs; compute
 * hex(HMAC-SHA256(secret, t + '.' + rawBody)); accept when it equals a v1 value (constant-time
 * comparison) and t is within 5 minutes of the receiver's clock. The timestamp is inside the signed
 * text, so an old call cannot be replayed with a fresh one.
 */

export const SIGNATURE_HEADER = 'Jackdaw-Signature'

/** How far a signature's timestamp may be from the receiver's clock, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300

function hmac(secret: string, timestamp: number, payload: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex')
}

/** The header value for a body, signed at `timestamp` (unix seconds, default now). */
export function sign(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, payload)}`
}

export interface ParsedSignature {
  timestamp: number
  signatures: string[]
}

/** The parts of a header value, or undefined when it is not one. Unknown schemes are ignored. */
export function parseSignatureHeader(header: string): ParsedSignature | undefined {
  let timestamp: number | undefined
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase())
  }
  if (timestamp === undefined || signatures.length === 0) return undefined
  return { timestamp, signatures }
}

/**
 * Whether `header` is a valid signature of `payload` (the raw body text) with `secret`, made
 * within `toleranceSeconds` of `now` (unix seconds). False for a missing or malformed header, a
 * changed body, another secret, or a timestamp too old or too far ahead.
 */
export function verifySignature(
  payload: string,
  header: string | string[] | undefined,
  secret: string,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  now = Date.now() / 1000,
): boolean {
  const value = Array.isArray(header) ? header[0] : header
  if (!value || !secret) return false
  const parsed = parseSignatureHeader(value)
  if (!parsed) return false
  if (Math.abs(now - parsed.timestamp) > toleranceSeconds) return false
  const expected = Buffer.from(hmac(secret, parsed.timestamp, payload), 'hex')
  return parsed.signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected))
}
