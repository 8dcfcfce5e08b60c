import currencyCodes from 'currency-codes'

// ISO 4217's own list (a data package that follows its publications), not the runtime's Intl
// list, which differs between Node versions and leaves out current codes (VED, the fund codes)
const CURRENCIES = new Set(currencyCodes.codes().map((c) => c.toLowerCase()))

/** An ISO 4217 code in any case, as the lowercase code the API shows; undefined if unknown. */
export function normalizeCurrency(code: string): string | undefined {
  const lower = code.toLowerCase()
  return CURRENCIES.has(lower) ? lower : undefined
}

/** The largest amount a charge may have, in the smallest currency unit. */
export const MAX_AMOUNT = 99_999_999_999
