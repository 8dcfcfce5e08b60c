import type { AppError } from '../errors.js'
import { pageCsp } from './page-security.js'

/** The payer's pages of charges: a payer's browser gets a page from these, never the API's JSON. */
export const HOSTED_PATH = '/v2/hosted/charges'

export const HTML = 'text/html; charset=utf-8'

/**
 * The headers of every answer under the hosted pages' addresses, errors and redirects too: the
 * page's token is in its address, which a browser would otherwise send on, as the Referer, to the
 * shop the payer goes to next.
 */
export const HOSTED_PAGE_HEADERS = {
  'content-security-policy': pageCsp({ 'style-src': "'unsafe-inline'", 'img-src': 'data:' }),
  'referrer-policy': 'no-referrer',
}

/** True of a request target under the hosted pages' addresses, whatever its query. */
export function isHostedPath(url: string): boolean {
  const path = url.split('?')[0] as string
  return path === '/v2/hosted' || path.startsWith('/v2/hosted/')
}

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string)

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
.box{border:1px solid #ccc;border-radius:12px;padding:1.5rem}.amount{font-size:2rem;font-weight:600}
.test{background:#fff4cc;padding:.25rem .5rem;border-radius:6px;font-size:.8rem}
.qr{font-family:monospace;background:#f4f4f4;padding:1rem;word-break:break-all}
button{font:inherit;padding:.6rem 1.2rem;border-radius:8px;border:1px solid #888;margin-right:.5rem;cursor:pointer}
button[value=approve]{background:#1d7f3a;color:#fff;border-color:#1d7f3a}</style></head>
<body><main class="box">${body}</main></body></html>`
}

export const NOT_FOUND_PAGE = page(
  'Payment not found',
  '<h1>Payment not found</h1><p>This payment link is not valid.</p>',
)

/**
 * The page of an error met under the hosted pages' addresses. `unreadable`: the link or form
 * could not be read (a parameter its schema refuses). A fault of the service's says to try again
 * and names no internals.
 */
export function errorPage(err: AppError, unreadable = false): string {
  if (err.status === 404) return NOT_FOUND_PAGE
  const [heading, why] =
    err.status >= 500
      ? ['This payment cannot be answered right now', 'Please try again in a moment.']
      : ['This payment cannot be answered', unreadable ? 'This payment link is not valid.' : `${err.message}.`]
  return page('Payment', `<h1>${escapeHtml(heading)}</h1><p>${escapeHtml(why)}</p>`)
}
