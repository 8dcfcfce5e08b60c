import { afterEach, describe, expect, it, vi } from 'vitest'
import { timestampNow } from '../../src/domain/time.js'

describe('timestampNow', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('is the clock in the API form, to the microsecond, whichever second it is in', () => {
    vi.useFakeTimers()
    for (const at of [
      '2026-11-24T10:15:30.999Z',
      '2026-11-24T10:15:31.005Z',
      '2026-11-24T10:15:31.050Z',
      '2026-11-24T10:15:31.000Z',
      // back to an earlier second: the clock was set back
      '2026-11-24T09:59:59.123Z',
      '2027-01-01T00:00:00.000Z',
    ]) {
      vi.setSystemTime(new Date(at))
      expect(timestampNow()).toBe(at.replace('Z', '000Z'))
    }
  })

  it('lies between two readings of the real clock', () => {
    for (let i = 0; i < 2_000; i++) {
      const before = new Date().toISOString().replace('Z', '000Z')
      const now = timestampNow()
      const after = new Date().toISOString().replace('Z', '000Z')
      expect(now >= before && now <= after).toBe(true)
    }
  })

  it('is never before a later time the database gave', () => {
    const ahead = '2999-01-01T00:00:00.000001Z'
    expect(timestampNow('2000-01-01T00:00:00.000000Z', ahead)).toBe(ahead)
    expect(timestampNow('2000-01-01T00:00:00.000000Z')).not.toBe('2000-01-01T00:00:00.000000Z')
  })
})
