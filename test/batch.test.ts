import { describe, expect, it } from 'vitest'
import { batched } from '../src/store/batch.js'

/** The batching of concurrent calls (src/store/batch.ts), with a statement the test controls. */

function controlled<I, O>(answer: (items: I[]) => O[] | Error) {
  const batches: I[][] = []
  const pending: (() => void)[] = []
  const run = (items: I[]) =>
    new Promise<O[]>((resolve, reject) => {
      batches.push(items)
      pending.push(() => {
        const out = answer(items)
        if (out instanceof Error) reject(out)
        else resolve(out)
      })
    })
  /** lets every batch under way return, and those that follow, until none is left */
  const drain = async () => {
    while (pending.length > 0) {
      pending.shift()?.()
      await new Promise((r) => setTimeout(r, 0))
    }
  }
  return { run, batches, drain }
}

describe('batched', () => {
  it('runs a call alone at once when nothing is under way', async () => {
    const c = controlled((items: number[]) => items.map((n) => n * 2))
    const call = batched(c.run)
    const answer = call(21)
    expect(c.batches).toEqual([[21]])
    await c.drain()
    expect(await answer).toBe(42)
  })

  it('calls made while a batch is under way go together as the next one, each with its own answer', async () => {
    const c = controlled((items: number[]) => items.map((n) => `#${n}`))
    const call = batched(c.run)
    const answers = [1, 2, 3, 4, 5].map((n) => call(n))
    expect(c.batches).toEqual([[1]])
    await c.drain()
    expect(c.batches).toEqual([[1], [2, 3, 4, 5]])
    expect(await Promise.all(answers)).toEqual(['#1', '#2', '#3', '#4', '#5'])
  })

  it('keeps a batch to its largest size, the rest going in the batches after it', async () => {
    const c = controlled((items: number[]) => items)
    const call = batched(c.run, { maxSize: 3 })
    const answers = Array.from({ length: 8 }, (_, i) => call(i))
    await c.drain()
    expect(c.batches).toEqual([[0], [1, 2, 3], [4, 5, 6], [7]])
    expect(await Promise.all(answers)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })

  it('runs up to maxInFlight batches at once', async () => {
    const c = controlled((items: number[]) => items)
    const call = batched(c.run, { maxInFlight: 2 })
    const answers = [1, 2, 3, 4].map((n) => call(n))
    expect(c.batches).toEqual([[1], [2]])
    await c.drain()
    expect(c.batches).toEqual([[1], [2], [3, 4]])
    await Promise.all(answers)
  })

  it('never puts two calls with one key in one batch: the later goes in a batch after, in order', async () => {
    const c = controlled((items: string[]) => items)
    const call = batched(c.run, { key: (item: string) => item.slice(-1) })
    const answers = ['1a', '2b', '3a', '4c', '5a', '6b'].map((x) => call(x))
    await c.drain()
    expect(c.batches).toEqual([['1a'], ['2b', '3a', '4c'], ['5a', '6b']])
    expect(await Promise.all(answers)).toEqual(['1a', '2b', '3a', '4c', '5a', '6b'])
  })

  it('when a batch of several fails, runs each of its calls alone: only the bad one fails', async () => {
    const c = controlled((items: number[]) => (items.includes(13) ? new Error('bad row 13') : items.map((n) => n + 1)))
    const call = batched(c.run)
    const first = call(0)
    const answers = [11, 12, 13, 14].map((n) =>
      call(n).then(
        (v) => ({ v }),
        (e: Error) => ({ e: e.message }),
      ),
    )
    await c.drain()
    await first
    expect(await Promise.all(answers)).toEqual([{ v: 12 }, { v: 13 }, { e: 'bad row 13' }, { v: 15 }])
    expect(c.batches).toEqual([[0], [11, 12, 13, 14], [11], [12], [13], [14]])
  })

  it('goes on with the calls that waited after a batch fails', async () => {
    const c = controlled((items: number[]) => (items.length === 1 && items[0] === 1 ? new Error('down') : items))
    const call = batched(c.run)
    const failed = call(1).catch((e: Error) => e.message)
    const later = [2, 3].map((n) => call(n))
    await c.drain()
    expect(await failed).toBe('down')
    expect(await Promise.all(later)).toEqual([2, 3])
  })
})
