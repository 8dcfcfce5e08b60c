import { lookup } from 'node:dns/promises'
import { describe, expect, it } from 'vitest'
import { ConfigError, parseConfig } from '../../src/config.js'
import { explainStartupError } from '../../src/main.js'
import { notifyWorkerSettings } from '../../src/notify/worker.js'

function refusal(env: Record<string, string>): string {
  try {
    parseConfig(env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('the configuration was accepted')
}

describe('defaults', () => {
  it('listens on PORT 8080 and keeps the embedded store in ./data unless told', () => {
    const config = parseConfig({})
    expect(config.PORT).toBe(8080)
    expect(config.JACKDAW_DATA_DIR).toBe('./data')
    const told = parseConfig({ PORT: '9090', JACKDAW_DATA_DIR: '/var/lib/jackdaw' })
    expect(told.PORT).toBe(9090)
    expect(told.JACKDAW_DATA_DIR).toBe('/var/lib/jackdaw')
  })

  it('gives the notify worker 4 calls per account and per host, 3 s to connect and 10 s per call unless told', () => {
    expect(notifyWorkerSettings(parseConfig({}))).toMatchObject({
      accountConcurrency: 4,
      hostConcurrency: 4,
      connectTimeoutMs: 3000,
      timeoutMs: 10_000,
    })
    const told = parseConfig({
      JACKDAW_NOTIFY_ACCOUNT_CONCURRENCY: '2',
      JACKDAW_NOTIFY_HOST_CONCURRENCY: '3',
      JACKDAW_NOTIFY_CONNECT_TIMEOUT_MS: '1500',
    })
    expect(notifyWorkerSettings(told)).toMatchObject({
      accountConcurrency: 2,
      hostConcurrency: 3,
      connectTimeoutMs: 1500,
    })
    for (const name of [
      'JACKDAW_NOTIFY_ACCOUNT_CONCURRENCY',
      'JACKDAW_NOTIFY_HOST_CONCURRENCY',
      'JACKDAW_NOTIFY_CONNECT_TIMEOUT_MS',
    ]) {
      expect(refusal({ [name]: 'four' })).toContain(`${name}=`)
    }
  })
})

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

describe('addresses and times the service could not use', () => {
  it('refuses an address with no host, and a time past what a timer can wait, naming each', () => {
    const message = refusal({
      JACKDAW_PUBLIC_URL: 'https://',
      JACKDAW_LIVE_PROCESSOR_URL: 'http://pay example.com',
      REDIS_URL: 'redis://',
      JACKDAW_RECOVERY_INTERVAL_MS: '3000000000',
      JACKDAW_RECOVERY_GRACE_MS: '99999999999',
      JACKDAW_RATE_WINDOW_MS: '99999999999',
      JACKDAW_ENCRYPTION_KEY: 'c2hvcnQ=',
    })
    for (const name of [
      'JACKDAW_PUBLIC_URL',
      'JACKDAW_LIVE_PROCESSOR_URL',
      'REDIS_URL',
      'JACKDAW_RECOVERY_INTERVAL_MS',
      'JACKDAW_RECOVERY_GRACE_MS',
      'JACKDAW_RATE_WINDOW_MS',
      'JACKDAW_ENCRYPTION_KEY',
    ]) {
      expect(message).toContain(`${name}=`)
    }
  })

  it("refuses a notify call's lease no longer than its timeout: a call still running would be sent twice", () => {
    expect(refusal({ JACKDAW_NOTIFY_LEASE_MS: '10000' })).toContain(
      'JACKDAW_NOTIFY_LEASE_MS="10000": must be longer than JACKDAW_NOTIFY_TIMEOUT_MS (10000)',
    )
    expect(refusal({ JACKDAW_NOTIFY_TIMEOUT_MS: '5000', JACKDAW_NOTIFY_LEASE_MS: '2000' })).toContain(
      'must be longer than JACKDAW_NOTIFY_TIMEOUT_MS (5000)',
    )
    expect(
      parseConfig({ JACKDAW_NOTIFY_TIMEOUT_MS: '5000', JACKDAW_NOTIFY_LEASE_MS: '5001' }).JACKDAW_NOTIFY_LEASE_MS,
    ).toBe(5001)
  })

  it("takes PostgreSQL's addresses of a socket directory, which name no host", () => {
    for (const url of ['postgresql:///jackdaw?host=/var/run/postgresql', 'postgres://app:pw@/jackdaw?host=/tmp']) {
      expect(parseConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url)
    }
  })
})

describe('the proxies trusted for client addresses', () => {
  it('takes addresses, ranges and the named ranges, and counts unknown keys 20 per 300 s unless told', () => {
    const config = parseConfig({ JACKDAW_TRUST_PROXY: '10.0.0.0/8, 192.0.2.1,loopback,fd00::/8' })
    expect(config.JACKDAW_TRUST_PROXY).toBe('10.0.0.0/8, 192.0.2.1,loopback,fd00::/8')
    expect(config.JACKDAW_AUTH_FAILURE_LIMIT).toBe(20)
    expect(config.JACKDAW_AUTH_FAILURE_WINDOW_SECONDS).toBe(300)
    expect(parseConfig({}).JACKDAW_TRUST_PROXY).toBeUndefined()
  })

  it('refuses what is not an address or range at start, naming the setting', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.example', '10.0.0.1,,']) {
      const message = refusal({ JACKDAW_TRUST_PROXY: bad })
      expect(message).toContain('JACKDAW_TRUST_PROXY=')
    }
    expect(refusal({ JACKDAW_AUTH_FAILURE_LIMIT: '-1' })).toContain('JACKDAW_AUTH_FAILURE_LIMIT')
    // 0 turns the count off
    expect(parseConfig({ JACKDAW_AUTH_FAILURE_LIMIT: '0' }).JACKDAW_AUTH_FAILURE_LIMIT).toBe(0)
  })
})

describe('the retention of security codes', () => {
  it('is a day unless told, and at least a minute and at most 30 days', () => {
    expect(parseConfig({}).JACKDAW_SECURITY_CODE_RETENTION_SECONDS).toBe(86400)
    expect(
      parseConfig({ JACKDAW_SECURITY_CODE_RETENTION_SECONDS: '600' }).JACKDAW_SECURITY_CODE_RETENTION_SECONDS,
    ).toBe(600)
    for (const bad of ['59', '2592001', 'a day']) {
      expect(refusal({ JACKDAW_SECURITY_CODE_RETENTION_SECONDS: bad })).toContain(
        'JACKDAW_SECURITY_CODE_RETENTION_SECONDS',
      )
    }
  })
})

describe('a start that fails', () => {
  it('names HOST when it is no address to listen on, without a stack trace', async () => {
    const err = await lookup('nonexistent.invalid').catch((e: unknown) => e)
    const said = explainStartupError(err, 'nonexistent.invalid')
    expect(said).toMatch(/^HOST names no address of this machine to listen on: /)
    expect(said).not.toMatch(/\n\s+at /)
    // a name that is not HOST (the database's, say) is not blamed on HOST
    expect(explainStartupError(err, '127.0.0.1')).not.toMatch(/^HOST/)
  })
})
