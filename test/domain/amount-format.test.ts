import { describe, expect, it } from 'vitest'
import { formatAmount, parseAmount } from '../../src/domain/amount-format.js'
import { minorUnits } from '../../src/domain/money.js'

describe('amounts in the currency units', () => {
  it('formats by the minor unit of each currency', () => {
    expect(formatAmount(1234, 'usd')).toBe('$12.34')
    expect(formatAmount(1234, 'jpy')).toBe('¥1,234')
    expect(formatAmount(1234, 'kwd')).toMatch(/^KWD\s1\.234$/)
    expect(minorUnits('jpy')).toBe(0)
  })

  it('reads a typed amount back into the smallest unit, refusing more decimals than the currency has', () => {
    expect(parseAmount('12.5', 'usd')).toBe(1250)
    expect(parseAmount('12', 'usd')).toBe(1200)
    expect(parseAmount('0.01', 'usd')).toBe(1)
    expect(parseAmount('1234', 'jpy')).toBe(1234)
    expect(parseAmount('12.3', 'jpy')).toBeUndefined()
    expect(parseAmount('1.234', 'usd')).toBeUndefined()
    expect(parseAmount('-1', 'usd')).toBeUndefined()
    expect(parseAmount('abc', 'usd')).toBeUndefined()
  })
})
