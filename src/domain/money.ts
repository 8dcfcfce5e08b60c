import currencyCodes from 'currency-codes'

/**
 * ISO 4217 codes that name no money a payer can pay in: the testing and no-currency codes,
 * precious metals, bond-market and accounting units, and the fund codes (units of account beside
 * a country's currency, such as Chile's Unidad de Fomento). ISO's list marks them, the data
 * package does not: they are named here.
 */
const NOT_MONEY = new Set([
  // no currency, testing
  'xxx',
  'xts',
  // gold, silver, platinum, palladium
  'xau',
  'xag',
  'xpt',
  'xpd',
  // bond-market units, the IMF's special drawing right, the Sucre, the ADB unit of account
  'xba',
  'xbb',
  'xbc',
  'xbd',
  'xdr',
  'xsu',
  'xua',
  // fund codes
  'bov',
  'che',
  'chw',
  'clf',
  'cou',
  'mxv',
  'usn',
  'uyi',
  'uyw',
])

/**
 * Each currency's minor-unit exponent: an amount is in units of 10^-exponent of the currency (cents
 * for 2, yen themselves for 0). From ISO 4217's own list (a data package that follows its
 * publications), not the runtime's Intl data, which differs between Node versions, leaves out
 * current codes (VED) and gives some currencies the digits they are shown with rather than their
 * minor unit (HUF and IDR with none, where ISO 4217 has 2).
 */
const MINOR_UNITS = new Map(
  currencyCodes
    .codes()
    .map((c) => c.toLowerCase())
    .filter((c) => !NOT_MONEY.has(c))
    .map((c) => [c, currencyCodes.code(c.toUpperCase())?.digits ?? 2] as const),
)

/** An ISO 4217 code of money in any case, as the lowercase code the API shows; undefined if not one. */
export function normalizeCurrency(code: string): string | undefined {
  const lower = code.toLowerCase()
  return MINOR_UNITS.has(lower) ? lower : undefined
}

/** The minor-unit exponent of a currency the API accepts (normalizeCurrency): 2 for usd, 0 for jpy. */
export function minorUnits(currency: string): number {
  return MINOR_UNITS.get(currency.toLowerCase()) ?? 2
}

/** An amount in a currency's minor unit as a decimal text in its major unit: 123456 eur is "1234.56". */
export function majorUnits(amount: number, currency: string): string {
  const exponent = minorUnits(currency)
  if (exponent === 0) return String(amount)
  const digits = String(Math.abs(amount)).padStart(exponent + 1, '0')
  return `${amount < 0 ? '-' : ''}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
}

/** The largest amount a charge may have, in the smallest currency unit. */
export const MAX_AMOUNT = 99_999_999_999
