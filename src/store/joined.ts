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
 * `alias.col, …` for rows PostgreSQL turns into JSON, timestamps (`…_at`) already in the API's
 * form: JSON is parsed natively, far cheaper than the driver's column-by-column parsing of a page.
 */
export function selectForJson(alias: string, names: readonly string[]): string {
  return names
    .map((n) =>
      n.endsWith('_at')
        ? `to_char(${alias}.${n} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ${n}`
        : `${alias}.${n}`,
    )
    .join(', ')
}
