import { randomHex } from '../crypto/random.js'

export const ID_PREFIX = {
  charge: 'ch_',
  customer: 'cus_',
  source: 'src_',
  refund: 're_',
  card: 'card_',
  event: 'evt_',
  account: 'acct_',
  delivery: 'dlv_',
} as const

export type IdKind = keyof typeof ID_PREFIX

const RANDOM_HEX = 20
const RANDOM_MAX = (1n << 80n) - 1n
let lastMs = 0
let lastRandom = 0n

/**
 * prefix + 32 lowercase hex: 12 of creation time in milliseconds, 20 random. Within one
 * millisecond the random part steps up by a random 1 to 2^32, so ids made by one process sort in
 * creation order and the next id is still not guessable from the last. The first random part of
 * a millisecond is below 2^79, which leaves room for 2^47 steps.
 */
export function newId(kind: IdKind): string {
  let ms = Date.now()
  let random: bigint
  const step = BigInt(`0x${randomHex(4)}`) + 1n
  if (ms <= lastMs && lastRandom + step <= RANDOM_MAX) {
    ms = lastMs
    random = lastRandom + step
  } else {
    random = BigInt(`0x${randomHex(10)}`) >> 1n
  }
  lastMs = ms
  lastRandom = random
  return `${ID_PREFIX[kind]}${ms.toString(16).padStart(12, '0')}${random.toString(16).padStart(RANDOM_HEX, '0')}`
}

/** Every id of this kind made before `ms` sorts before this, and every later one after it. */
export function idsBefore(kind: IdKind, ms: number): string {
  return `${ID_PREFIX[kind]}${Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')}`
}

/** The pattern of one kind of id, for path and body schemas. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIX[kind]}[0-9a-f]{32}$`
}

export function isId(kind: IdKind, value: string): boolean {
  return new RegExp(idPattern(kind)).test(value)
}
