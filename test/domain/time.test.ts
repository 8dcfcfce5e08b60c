import { afterEach, describe, expect, it, vi } from 'vitest'
import { asTimestamp, timestampNow, timestampPlus } from '../../src/domain/time.js'
import { formatTimestamp } from '../../src/store/db.js'

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

describe('timestampPlus', () => {
  it('moves a time on to the microsecond, across seconds, days and years', () => {
    expect(timestampPlus('2026-11-24T10:15:30.123456Z', 0)).toBe('2026-11-24T10:15:30.123456Z')
    expect(timestampPlus('2026-11-24T10:15:30.123456Z', 0.5)).toBe('2026-11-24T10:15:30.123956Z')
    expect(timestampPlus('2026-11-24T10:15:30.999999Z', 0.001)).toBe('2026-11-24T10:15:31.000000Z')
    expect(timestampPlus('2026-12-31T23:59:59.900000Z', 250)).toBe('2027-01-01T00:00:00.150000Z')
    expect(timestampPlus('2026-11-24T10:15:30.000001Z', 86_400_000)).toBe('2026-11-25T10:15:30.000001Z')
  })
})

describe('asTimestamp', () => {
  it("puts an ISO 8601 time of any offset in the API's form, and refuses text that is no time", () => {
    expect(asTimestamp('2027-11-27T11:40:31.123456Z')).toBe('2027-11-27T11:40:31.123456Z')
    expect(asTimestamp('2027-11-27T06:40:31-05:00')).toBe('2027-11-27T11:40:31.000000Z')
    expect(asTimestamp('2027-11-27T20:40:31.5+09:00')).toBe('2027-11-27T11:40:31.500000Z')
    for (const text of ['next year', '', '1700000000', 'Sat, 27 Nov 2027 11:40:31 GMT'])
      expect(asTimestamp(text)).toBeUndefined()
  })
})

describe('formatTimestamp (store/db.ts)', () => {
  it("gives PostgreSQL's UTC times in the API form, to the microsecond", () => {
    expect(formatTimestamp('2026-11-21 10:15:30.123456+00')).toBe('2026-11-21T10:15:30.123456Z')
    expect(formatTimestamp('2026-11-21T10:15:30.123456+00:00')).toBe('2026-11-21T10:15:30.123456Z')
    expect(formatTimestamp('2026-11-21 10:15:30.12+00')).toBe('2026-11-21T10:15:30.120000Z')
    expect(formatTimestamp('2026-11-21T10:15:30+00:00')).toBe('2026-11-21T10:15:30.000000Z')
  })

  it('never throws, read as it is after a commit: a time it cannot read is shown as printed', () => {
    expect(formatTimestamp('10000-01-01 00:00:00+00')).toBe('10000-01-01T00:00:00.000000Z')
    expect(formatTimestamp('infinity')).toBe('infinity')
    expect(formatTimestamp('0044-03-15 12:00:00+00 BC')).toBe('0044-03-15 12:00:00+00 BC')
  })
})
