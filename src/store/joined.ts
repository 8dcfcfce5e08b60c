import { formatTimestamp } from './db.js'

/**
 * One statement that joins a row with the rows it owns answers in one round trip what would
 * otherwise take one per table. Each table's columns come back under a prefix and are split
 * again here.
 */

export function columnNames(columns: string): readonly string[] {
  return columns.split(',').map((c) => c.trim())
}

/** `alias.col AS prefix_col, …` */
export function selectPrefixed(alias: string, names: readonly string[], prefix: string): string {
  return names.map((n) => `${alias}.${n} AS ${prefix}${n}`).join(', ')
}

/** The row of one table out of a joined row; undefined when an outer join found none. */
export function pick<R>(row: Record<string, unknown>, names: readonly string[], prefix = ''): R | undefined {
  if (row[`${prefix}${names[0]}`] === null) return undefined
  const out: Record<string, unknown> = {}
  for (const n of names) out[n] = row[`${prefix}${n}`]
  return out as R
}

/**
 * A row PostgreSQL turned into JSON (`to_json`, `json_agg`) comes back with its timestamps as
 * JSON shows them; this puts those named `…_at` or `…_since` in the API's form, in place, as the driver does
 * for the columns of a plain row (store/db.ts, formatTimestamp).
 */
export function timestampsFromJson<R extends object>(row: R, names: readonly (keyof R & string)[]): R {
  const values = row as Record<string, unknown>
  for (const n of names) {
    const v = values[n]
    if ((n.endsWith('_at') || n.endsWith('_since')) && typeof v === 'string') values[n] = formatTimestamp(v)
  }
  return row
}
