// The date and time to the second, as an ISO string up to its decimal point, for the second it was
// last made in: Date's toISOString is costly next to the rest of a request, and a request may ask
// the time more than once.
let cachedSecond = Number.NaN
let cachedPrefix = ''

/**
 * Now in the API's timestamp form, to the microsecond (`2026-11-21T10:15:30.123000Z`), never
 * before `notBefore`: a time the database gave an earlier change, whose clock may run ahead.
 */
export function timestampNow(...notBefore: string[]): string {
  const ms = Date.now()
  const second = Math.floor(ms / 1000)
  if (second !== cachedSecond) {
    cachedSecond = second
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 20)
  }
  const fraction = ms - second * 1000
  let at = `${cachedPrefix}${fraction < 10 ? '00' : fraction < 100 ? '0' : ''}${fraction}000Z`
  for (const t of notBefore) if (t > at) at = t
  return at
}

// The last second read and the last second written by timestampPlus: the times it is given come
// from one clock, mostly within one second of each other, and Date's parsing and printing are
// costly next to the rest of it.
let readSecond = ''
let readSecondMs = 0
let writtenSecond = Number.NaN
let writtenPrefix = ''

/** `timestamp`, in the API's form, moved on by `ms` milliseconds, to the microsecond. */
export function timestampPlus(timestamp: string, ms: number): string {
  const whole = timestamp.slice(0, 19)
  if (whole !== readSecond) {
    readSecond = whole
    readSecondMs = Date.parse(`${whole}Z`)
  }
  const micros = readSecondMs * 1000 + Number(timestamp.slice(20, 26)) + Math.round(ms * 1000)
  const second = Math.floor(micros / 1_000_000)
  if (second !== writtenSecond) {
    writtenSecond = second
    writtenPrefix = new Date(second * 1000).toISOString().slice(0, 20)
  }
  return `${writtenPrefix}${String(micros - second * 1_000_000).padStart(6, '0')}Z`
}

const API_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/**
 * An ISO 8601 date and time, in any offset, in the API's timestamp form (which compares as text);
 * undefined for text that is none.
 */
export function asTimestamp(text: string): string | undefined {
  if (API_TIMESTAMP.test(text)) return text
  const ms = Date.parse(text)
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(text)) return undefined
  return `${new Date(ms).toISOString().slice(0, 23)}000Z`
}

/** From one API timestamp to another, in milliseconds (to the millisecond). */
export function millisBetween(from: string, to: string): number {
  return Date.parse(`${to.slice(0, 23)}Z`) - Date.parse(`${from.slice(0, 23)}Z`)
}

/** The most one advance may move a test clock: a year. */
export const MAX_CLOCK_ADVANCE_SECONDS = 31_536_000

/**
 * The furthest a test clock runs ahead of the real time, in all: a hundred years of advances.
 * Times stay within the four-digit years that the API's timestamps have. The database holds the
 * same bound (001_baseline.sql).
 */
export const MAX_CLOCK_OFFSET_SECONDS = 100 * MAX_CLOCK_ADVANCE_SECONDS

/**
 * Where a deterministic account's test clock starts: a fixed instant, so that its times are the
 * same on every run; the clock then moves only when advanced.
 */
export const DETERMINISTIC_CLOCK_START = '2030-01-01T00:00:00.000000Z'
