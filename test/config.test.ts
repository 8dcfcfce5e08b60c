import { describe, expect, it } from 'vitest'
import { ConfigError, parseConfig } from '../src/config.js'

function refusal(env: Record<string, string>): string {
  try {
    parseConfig(env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('the configuration was accepted')
}

describe('a refused configuration', () => {
  it('names each bad setting and prints no secret and no password of an address', () => {
    const message = refusal({
      DATABASE_URL: 'postgress://app:S3cretPw@db.example:5432/jackdaw',
      REDIS_URL: 'http://:R3disPw/x@cache.example:6379',
      JACKDAW_LIVE_PROCESSOR_SECRET: 'short-s3cret',
      JACKDAW_ENCRYPTION_KEY: '',
      PORT: 'eighty',
    })
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'JACKDAW_LIVE_PROCESSOR_SECRET', 'PORT']) {
      expect(message).toContain(name)
    }
    for (const secret of ['S3cretPw', 'R3disPw', 'short-s3cret']) expect(message).not.toContain(secret)
    // what is not secret is shown, so the mistake can be seen
    expect(message).toContain('postgress://app:***@db.example:5432/jackdaw')
    expect(message).toContain('"eighty"')
    expect(message).toContain('JACKDAW_LIVE_PROCESSOR_SECRET=(12 characters, not shown)')
  })
})
