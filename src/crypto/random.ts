import { randomFillSync } from 'node:crypto'

// Random bytes are drawn from the system's generator a few kilobytes at a time: one call per id or
// per nonce costs more than the rest of making it.
const pool = Buffer.alloc(4096)
let poolOffset = pool.length

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
  const hex = pool.toString('hex', start, start + bytes)
  // a byte is never handed out twice
  pool.fill(0, start, start + bytes)
  return hex
}

/** `bytes` random bytes in a buffer of their own, from the cryptographic generator. */
export function randomBuffer(bytes: number): Buffer {
  const start = take(bytes)
  const out = Buffer.from(pool.subarray(start, start + bytes))
  pool.fill(0, start, start + bytes)
  return out
}
