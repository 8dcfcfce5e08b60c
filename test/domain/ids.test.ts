import { describe, expect, it, vi } from 'vitest'
import { ID_PREFIX, newId } from '../../src/domain/ids.js'

describe('ids', () => {
  it('are the prefix, 12 hex of the creation time in milliseconds, then 20 hex', async () => {
    // a generator of its own, whatever clock another file's ids were made on
    vi.resetModules()
    const fresh = await import('../../src/domain/ids.js')
    const before = Date.now()
    const id = fresh.newId('charge')
    const after = Date.now()
    expect(id).toMatch(/^ch_[0-9a-f]{32}$/)
    const ms = Number.parseInt(id.slice(3, 15), 16)
    expect(ms).toBeGreaterThanOrEqual(before)
    expect(ms).toBeLessThanOrEqual(after)
    for (const [kind, prefix] of Object.entries(ID_PREFIX)) {
      expect(newId(kind as keyof typeof ID_PREFIX).startsWith(prefix)).toBe(true)
    }
  })

  it('sort by creation even when many are made in one millisecond, and the next is not the last plus one', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('customer'))
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    const randomPart = (id: string) => BigInt(`0x${id.slice(16)}`)
    const sameMs = ids.slice(1).filter((id, i) => id.slice(4, 16) === ids[i]?.slice(4, 16))
    // 20 000 ids take far less than 20 000 milliseconds, so many share one
    expect(sameMs.length).toBeGreaterThan(1000)
    const steps = ids
      .slice(1)
      .map((id, i) => [id, ids[i] as string] as const)
      .filter(([id, prev]) => id.slice(4, 16) === prev.slice(4, 16))
      .map(([id, prev]) => randomPart(id) - randomPart(prev))
    expect(steps.every((d) => d >= 1n && d <= 1n << 32n)).toBe(true)
    // a step of exactly one would let one id be guessed from the one before it
    expect(steps.filter((d) => d === 1n).length).toBeLessThan(3)
  })

  it('keep sorting when the clock goes back, keeping the last time until it catches up', async () => {
    vi.resetModules()
    const fresh = await import('../../src/domain/ids.js')
    const at = Date.now()
    const stamp = (id: string) => Number.parseInt(id.slice(4, 16), 16)
    const clock = vi.spyOn(Date, 'now')
    try {
      clock.mockReturnValue(at)
      let last = fresh.newId('source')
      for (const back of [9_000, 3_600_000]) {
        clock.mockReturnValue(at - back)
        const id = fresh.newId('source')
        expect(stamp(id)).toBe(at)
        expect(id > last).toBe(true)
        last = id
      }
      clock.mockReturnValue(at + 1)
      const caughtUp = fresh.newId('source')
      expect(stamp(caughtUp)).toBe(at + 1)
      expect(caughtUp > last).toBe(true)
    } finally {
      clock.mockRestore()
    }
  })
})
