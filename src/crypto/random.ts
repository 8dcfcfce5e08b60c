import { randomFillSync } from 'node:crypto'

// Random bytes are drawn from the system's generator a few kilobytes at a time: one call per id or
// per nonce costs more than the rest of making it. Hex is formatted and the bytes cleared in
// JavaScript: for a few bytes, Buffer's native methods cost more than the call saves.
const pool = Buffer.alloc(4096)
let poolOffset = pool.length

/** Each byte's two lowercase hex digits. */
export const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))

function take(bytes: number): number {
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const start = poolOffset
  poolOffset += bytes
  return start
}

/** `bytes` random bytes as lowercase hex, from the cryptographic generator. */
export function randomHex(bytes: number): string {
  const start = take(bytes)
  let hex = ''
  for (let i = start; i < start + bytes; i++) {
    hex += BYTE_HEX[pool[i] as number]
    // a byte is never handed out twice
    pool[i] = 0
  }
  return hex
}

/** A random whole number below 2^32, from the cryptographic generator. */
export function randomUint32(): number {
  const start = take(4)
  const n = pool.readUInt32LE(start)
  pool[start] = pool[start + 1] = pool[start + 2] = pool[start + 3] = 0
  return n
}

/** `bytes` random bytes in a buffer of their own, from the cryptographic generator. */
export function randomBuffer(bytes: number): Buffer {
  const start = take(bytes)
  const out = Buffer.from(pool.subarray(start, start + bytes))
  pool.fill(0, start, start + bytes)
  return out
}
