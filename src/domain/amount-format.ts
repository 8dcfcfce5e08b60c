import { majorUnits, minorUnits } from './money.js'

/**
 * Amounts as people read them: in the currency's units, not its smallest one (12.34 USD for 1234;
 * 1234 JPY, which has no minor unit), by ISO 4217's minor unit (src/domain/money.ts). Pure, so the
 * hosted pages and the dashboard show amounts alike.
 */

/** An amount in the smallest unit, formatted with its currency, e.g. "$12.34", "¥1,234". */
export function formatAmount(amount: number, currency: string, locale = 'en'): string {
  const digits = minorUnits(currency)
  const major = majorUnits(amount, currency)
  try {
    const format = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    })
    // a decimal text is formatted exactly, where a number past 2^53 / 10^digits would not be
    return format.format(major as unknown as number)
  } catch {
    return `${major} ${currency.toUpperCase()}`
  }
}

/**
 * A decimal typed in the currency's units ("12.5") as an integer amount in its smallest unit
 * (1250); undefined for anything else, or for more decimals than the currency has.
 */
export function parseAmount(text: string, currency: string): number | undefined {
  const digits = minorUnits(currency)
  const m = /^(\d+)(?:\.(\d*))?$/.exec(text.trim())
  if (!m) return undefined
  const fraction = m[2] ?? ''
  if (fraction.length > digits) return undefined
  return Number(m[1]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0')
}
