/**
 * Now in the API's timestamp form, to the microsecond (`2026-11-21T10:15:30.123000Z`), never
 * before `notBefore`: a time the database gave an earlier change, whose clock may run ahead.
 */
export function timestampNow(...notBefore: string[]): string {
  let at = new Date().toISOString().replace('Z', '000Z')
  for (const t of notBefore) if (t > at) at = t
  return at
}
