import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { randomBuffer } from './random.js'

const VERSION = 'v1'

/**
 * Encrypts card data and secrets at rest with AES-256-GCM, and makes keyed fingerprints of
 * request bodies. One master key; the fingerprint key is derived from it, so neither use can
 * stand in for the other.
 */
export class Vault {
  readonly #encKey: Buffer
  readonly #macKey: Buffer

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('the encryption key must be 32 bytes')
    this.#encKey = Buffer.from(hkdfSync('sha256', masterKey, '', 'jackdaw encryption', 32))
    this.#macKey = Buffer.from(hkdfSync('sha256', masterKey, '', 'jackdaw fingerprint', 32))
  }

  encrypt(plaintext: string): string {
    const iv = randomBuffer(12)
    const cipher = createCipheriv('aes-256-gcm', this.#encKey, iv)
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`
  }

  decrypt(sealed: string): string {
    const [version, data] = sealed.split(':')
    if (version !== VERSION || !data) throw new Error('unknown ciphertext version')
    const raw = Buffer.from(data, 'base64')
    const decipher = createDecipheriv('aes-256-gcm', this.#encKey, raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(12, 28))
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
  }

  fingerprint(text: string): string {
    return createHmac('sha256', this.#macKey).update(text).digest('hex')
  }
}

export function timingSafeEqualText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export function parseMasterKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64')
  if (key.length !== 32) {
    throw new Error('JACKDAW_ENCRYPTION_KEY must be the base64 of exactly 32 bytes')
  }
  return key
}

/** The embedded store keeps its key beside its data, readable by the owner only. */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, 'encryption.key')
  if (existsSync(file)) return parseMasterKey(readFileSync(file, 'utf8').trim())
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return parseMasterKey(readFileSync(file, 'utf8').trim())
}
