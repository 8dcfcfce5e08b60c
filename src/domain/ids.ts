import { createHash } from 'node:crypto'
import { BYTE_HEX, randomUint32 } from '../crypto/random.js'

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

const TWO_32 = 2 ** 32

/** A whole number below 2^32 as 8 lowercase hex digits. */
const hex32 = (n: number) =>
  `${BYTE_HEX[n >>> 24]}${BYTE_HEX[(n >>> 16) & 255]}${BYTE_HEX[(n >>> 8) & 255]}${BYTE_HEX[n & 255]}`

// The last id's millisecond (and its hex) and random part: 80 bits as 16 + 32 + 32. In numbers of
// 32 bits or fewer, rather than one BigInt: a BigInt's parse and hex formatting would be most of the
// cost of an id.
let lastMs = 0
let lastMsHex = ''
let high = 0
let middle = 0
let low = 0

/**
 * prefix + 32 lowercase hex: 12 of creation time in milliseconds, 20 random. Within one
 * millisecond the random part steps up by a random 1 to 2^32, so ids made by one process sort in
 * creation order and the next id is still not guessable from the last. The first random part of
 * a millisecond is below 2^79, which leaves room for 2^47 steps.
 */
export function newId(kind: IdKind): string {
  const now = Date.now()
  const step = randomUint32() + 1
  const lowSum = low + step
  const carryMiddle = lowSum >= TWO_32 ? 1 : 0
  const middleSum = middle + carryMiddle
  const carryHigh = middleSum >= TWO_32 ? 1 : 0
  if (now <= lastMs && high + carryHigh < 0x10000) {
    low = lowSum - carryMiddle * TWO_32
    middle = middleSum - carryHigh * TWO_32
    high += carryHigh
  } else {
    if (now !== lastMs) lastMsHex = now.toString(16).padStart(12, '0')
    lastMs = now
    high = randomUint32() >>> 17
    middle = randomUint32()
    low = randomUint32()
  }
  return `${ID_PREFIX[kind]}${lastMsHex}${BYTE_HEX[high >>> 8]}${BYTE_HEX[high & 255]}${hex32(middle)}${hex32(low)}`
}

/** Every id of this kind made before `ms` sorts before this, and every later one after it. */
export function idsBefore(kind: IdKind, ms: number): string {
  return `${ID_PREFIX[kind]}${Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')}`
}

/** The pattern of one kind of id, for path and body schemas. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIX[kind]}[0-9a-f]{32}$`
}

/**
 * A deterministic account's test-mode id: the same format, with the account's test-clock time in
 * milliseconds, then its count of ids made so far (8 hex) and 12 hex of a hash of seed and count.
 * Its test clock never goes back and the count only rises, so these ids sort by creation too; the
 * same seed and the same requests in the same order make the same ids.
 */
export function seededId(kind: IdKind, seed: string, counter: number, ms: number): string {
  const mix = createHash('sha256').update(`${seed}\u0000${counter}`).digest('hex').slice(0, 12)
  const count = (counter % TWO_32).toString(16).padStart(8, '0')
  return `${ID_PREFIX[kind]}${Math.floor(ms).toString(16).padStart(12, '0')}${count}${mix}`
}
