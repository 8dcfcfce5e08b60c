import { hash, randomInt } from 'node:crypto'

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

export type KeyKind = 'secret' | 'public'

export interface ParsedKey {
  kind: KeyKind
  livemode: boolean
}

function randomAlphanumeric(length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]
  return out
}

export function newApiKey(kind: KeyKind, livemode: boolean): string {
  return `${kind === 'secret' ? 'sk' : 'pk'}_${livemode ? 'live' : 'test'}_${randomAlphanumeric(32)}`
}

export function newWebhookSecret(): string {
  return `whsec_${randomAlphanumeric(32)}`
}

const KEY_SHAPE = /^(sk|pk)_(test|live)_[A-Za-z0-9]{24,}$/

/** The kind and mode a key's text claims; the store decides whether it is real. */
export function parseApiKey(key: string): ParsedKey | undefined {
  const m = KEY_SHAPE.exec(key)
  if (!m) return undefined
  return { kind: m[1] === 'sk' ? 'secret' : 'public', livemode: m[2] === 'live' }
}

/** Keys carry 190 bits of randomness, so a fast unsalted hash is enough to keep them unreadable. */
export function hashApiKey(key: string): string {
  return hash('sha256', key)
}

export function keyHint(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`
}
