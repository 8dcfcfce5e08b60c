import { expect } from 'vitest'
import type { Queryable } from '../../src/store/db.js'

/** The number as people write it too: in groups of four, split as text or as a URL encodes it. */
const spellings = (n: string) =>
  [' ', '-', '\t', '%20', '%2D', '%2d', '+', '%2B', '%0A', ' - ', '--', '  ', '.', '_', '/', ', ', '\u2013']
    .map((sep) => n.replace(/(\d{4})(?=\d)/g, `$1${sep}`))
    .concat(n)

/** What finds one of these card numbers or security codes in a text; it answers what it found. */
export function leakFinder(numbers: string[], cvcs: string[]): (text: string) => string[] {
  const written = numbers.flatMap(spellings)
  return (text) => {
    const found = written.filter((s) => text.includes(s))
    // a security code as a JSON value or next to its name ("cvc":"987", cvc=987, cvc 4321)
    for (const cvc of cvcs) {
      if (text.includes(`"${cvc}"`)) found.push(`"${cvc}"`)
      if (new RegExp(`cvc\\W{0,4}${cvc}`, 'i').test(text)) found.push(`cvc…${cvc}`)
    }
    if (/"cvc"\s*:/.test(text)) found.push('"cvc":')
    if (/"number"\s*:/.test(text)) found.push('"number":')
    return found
  }
}

/** Greps every row of every table of the store for card data; returns the rows read per table. */
export async function grepStoreFor(db: Queryable, leaks: (text: string) => string[]): Promise<Map<string, number>> {
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  )
  const rows = new Map<string, number>()
  for (const { table_name: name } of tables.rows) {
    const dump = await db.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${name.replace(/"/g, '""')}" x`)
    for (const { j } of dump.rows) expect(leaks(j), `${name}: ${j}`).toEqual([])
    rows.set(name, dump.rows.length)
  }
  return rows
}
