import { AppError, withoutCardNumbers } from '../errors.js'
import { CursorNotFound, type Page } from '../store/list.js'

export const DEFAULT_PAGE_SIZE = 20

export interface ListQueryInput {
  start_after?: string | undefined
  limit?: number | undefined
}

/**
 * Runs a page query, turning an unknown cursor into the documented 400. `filters`, the list's
 * own query parameters as sent, are kept in the `next` link.
 */
export async function pageOf<T extends { id?: string | undefined }>(
  path: string,
  query: ListQueryInput,
  load: (page: { startAfter?: string | undefined; limit: number }) => Promise<Page<T>>,
  filters: Record<string, string | undefined> = {},
) {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE
  let page: Page<T>
  try {
    page = await load({ startAfter: query.start_after, limit })
  } catch (err) {
    if (err instanceof CursorNotFound) {
      // cut after the card numbers are out: a cut one keeps too many of its digits to be caught
      const shown = withoutCardNumbers(query.start_after ?? '').slice(0, 100)
      throw new AppError('cursor_invalid', `start_after names no object of this list: '${shown}'`, {
        param: 'start_after',
      })
    }
    throw err
  }
  const last = page.rows[page.rows.length - 1]
  const kept = Object.entries(filters)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `&${k}=${encodeURIComponent(v)}`)
    .join('')
  const next =
    page.hasMore && last?.id
      ? `${path}?start_after=${encodeURIComponent(last.id)}${query.limit !== undefined ? `&limit=${query.limit}` : ''}${kept}`
      : null
  return { object: 'list' as const, next, data: page.rows }
}
