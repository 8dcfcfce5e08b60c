/**
 * Amounts as people read them: in the currency's units, not its smallest one (12.34 USD for 1234;
 * 1234 JPY, which has no minor unit). Pure, with no dependency, so the dashboard uses it too.
 */

/** The digits of the currency's minor unit (2 for usd, 0 for jpy, 3 for kwd); 2 when unknown. */
export function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/** An amount in the smallest unit, formatted with its currency, e.g. "$12.34", "¥1,234". */
export function formatAmount(amount: number, currency: string, locale = 'en'): string {
  try {
    const digits = minorDigits(currency)
    return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount / 10 ** digits)
  } catch {
    return `${amount} ${currency.toUpperCase()}`
  }
}

/**
 * A decimal typed in the currency's units ("12.5") as an integer amount in its smallest unit
 * (1250); undefined for anything else, or for more decimals than the currency has.
 */
export function parseAmount(text: string, currency: string): number | undefined {
  const digits = minorDigits(currency)
  const m = /^(\d+)(?:\.(\d*))?$/.exec(text.trim())
  if (!m) return undefined
  const fraction = m[2] ?? ''
  if (fraction.length > digits) return undefined
  return Number(m[1]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0')
}
