/** Card rules that need no store: number checks, brand, expiry and the test-mode card table. */

export function luhnValid(number: string): boolean {
  let sum = 0
  let double = false
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

export function cardBrand(number: string): string {
  const n2 = Number(number.slice(0, 2))
  const n3 = Number(number.slice(0, 3))
  const n4 = Number(number.slice(0, 4))
  if (number.startsWith('4')) return 'visa'
  if ((n2 >= 51 && n2 <= 55) || (n4 >= 2221 && n4 <= 2720)) return 'mastercard'
  if (n2 === 34 || n2 === 37) return 'amex'
  if (n4 === 6011 || n2 === 65 || (n3 >= 644 && n3 <= 649)) return 'discover'
  if (n4 >= 3528 && n4 <= 3589) return 'jcb'
  if (n2 === 36 || n2 === 38 || (n3 >= 300 && n3 <= 305)) return 'diners'
  if (n2 === 62) return 'unionpay'
  return 'unknown'
}

/**
 * What a person or a form puts between a card number's groups, as the characters of a regular
 * expression's class: white space of any kind, a dash of any kind, punctuation.
 */
export const GROUP_SEPARATORS = "\\s\\-\\u2010-\\u2015\\u2212.+/_,'#*|=;()~"

/**
 * Digits as a card number may be written: groups split by up to three separators (white space of
 * any kind, a dash of any kind, punctuation a person or a form puts between groups, a URL's
 * escape), or by dashes with spaces around them. A card number is one group or several in a row;
 * other numbers may stand beside it (`4111 1111 1111 1111 2025`). Only a row that is surely a card
 * number (isCardNumber) counts, so a wide net here costs no other text.
 */
const DIGIT_GROUPS = new RegExp(
  `\\d+(?:(?:\\s*[-\\u2010-\\u2015\\u2212]{1,3}\\s*|(?:[${GROUP_SEPARATORS}:]|%[0-9A-Fa-f]{2}){1,3})\\d+)*`,
  'g',
)

/** 12 to 19 digits of a known brand's prefix that pass the Luhn check: surely a card number. */
function isCardNumber(digits: string): boolean {
  return digits.length >= 12 && digits.length <= 19 && cardBrand(digits) !== 'unknown' && luhnValid(digits)
}

/**
 * The spans of `run` (DIGIT_GROUPS) that are a card number: the longest row of groups from each
 * group whose digits together are one (isCardNumber), or are `known`. Written in groups, a card
 * number's are of three digits or more: shorter ones (a block and a lot, `4-12-31`) join none.
 */
function cardSpans(run: string, known?: string): [number, number][] {
  // a URL's escape is a separator, not digits: blanked, so that positions stay
  const groups = [...run.replace(/%[0-9A-Fa-f]{2}/g, '   ').matchAll(/\d+/g)].map((m) => ({
    digits: m[0],
    start: m.index,
    end: m.index + m[0].length,
  }))
  const spans: [number, number][] = []
  for (let i = 0; i < groups.length; i++) {
    let digits = ''
    let last = -1
    for (let j = i; j < groups.length; j++) {
      const group = groups[j] as { digits: string }
      if (j > i && (group.digits.length < 3 || (groups[i] as { digits: string }).digits.length < 3)) break
      digits += group.digits
      if (digits.length > 19) break
      if (isCardNumber(digits) || digits === known) last = j
    }
    if (last >= 0) {
      spans.push([(groups[i] as { start: number }).start, (groups[last] as { end: number }).end])
      i = last
    }
  }
  return spans
}

/** True when `text` holds what is surely a card number, however its groups are split. */
export function holdsCardNumber(text: string): boolean {
  for (const run of text.matchAll(DIGIT_GROUPS)) if (cardSpans(run[0]).length > 0) return true
  return false
}

/** The text with each card number in it (isCardNumber, or `known`) shown as `[redacted]`. */
export function redactCardNumbers(text: string, known?: string): string {
  return text.replace(DIGIT_GROUPS, (run) => {
    let out = ''
    let at = 0
    for (const [start, end] of cardSpans(run, known)) {
      out += `${run.slice(at, start)}[redacted]`
      at = end
    }
    return out + run.slice(at)
  })
}

/** True when the card's last valid month is before the month of `now`. */
export function cardExpired(expMonth: number, expYear: number, now = new Date()): boolean {
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth() + 1
  return expYear < year || (expYear === year && expMonth < month)
}

/** What the simulator does with a test card. */
export type TestCardOutcome =
  | 'succeeds'
  | 'requires_3ds'
  | 'generic_decline'
  | 'insufficient_funds'
  | 'lost_card'
  | 'stolen_card'
  | 'expired_card'
  | 'incorrect_cvc'
  | 'processing_error'
  | 'processor_timeout'
  | 'authenticates_then_declines'

export interface TestCard {
  number: string
  outcome: TestCardOutcome
  funding: 'credit' | 'debit' | 'prepaid'
  country: string
  issuing_bank: string
}

const BANK = 'Jackdaw Test Bank'

/**
 * The documented test cards (docs/testing.md). In test mode, any other number that passes the
 * checks succeeds without 3-D Secure and shows funding, country and bank as "unknown".
 */
export const TEST_CARDS: readonly TestCard[] = [
  { number: '4242424242424242', outcome: 'succeeds', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '5555555555554444', outcome: 'succeeds', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '4000056655665556', outcome: 'succeeds', funding: 'debit', country: 'US', issuing_bank: BANK },
  { number: '5200828282828210', outcome: 'succeeds', funding: 'debit', country: 'PH', issuing_bank: BANK },
  { number: '378282246310005', outcome: 'succeeds', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '6011111111111117', outcome: 'succeeds', funding: 'prepaid', country: 'US', issuing_bank: BANK },
  { number: '4000000000003220', outcome: 'requires_3ds', funding: 'credit', country: 'US', issuing_bank: BANK },
  {
    number: '4000000000003246',
    outcome: 'authenticates_then_declines',
    funding: 'credit',
    country: 'US',
    issuing_bank: BANK,
  },
  { number: '4000000000000002', outcome: 'generic_decline', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '4000000000009995', outcome: 'insufficient_funds', funding: 'debit', country: 'US', issuing_bank: BANK },
  { number: '4000000000009987', outcome: 'lost_card', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '4000000000009979', outcome: 'stolen_card', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '4000000000000069', outcome: 'expired_card', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '4000000000000127', outcome: 'incorrect_cvc', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '4000000000000119', outcome: 'processing_error', funding: 'credit', country: 'US', issuing_bank: BANK },
  { number: '4000000000000036', outcome: 'processor_timeout', funding: 'credit', country: 'US', issuing_bank: BANK },
]

const byNumber = new Map(TEST_CARDS.map((c) => [c.number, c]))

export function testCard(number: string): TestCard | undefined {
  return byNumber.get(number)
}

export interface CardProfile {
  brand: string
  funding: string
  country: string
  issuing_bank: string
}

/** Brand from the number; funding, country and bank from the test table in test mode. */
export function cardProfile(number: string, livemode: boolean): CardProfile {
  const known = livemode ? undefined : testCard(number)
  return {
    brand: cardBrand(number),
    funding: known?.funding ?? 'unknown',
    country: known?.country ?? 'unknown',
    issuing_bank: known?.issuing_bank ?? 'unknown',
  }
}
