import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { pageCsp } from '../page-security.js'

/**
 * Where `npm run build` puts the dashboard's bundle: dist/dashboard of the package, three folders
 * up from this module whether it runs from src/http/routes or dist/http/routes.
 */
export const DASHBOARD_BUNDLE_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../dist/dashboard',
)

// Scripts and styles only from this origin (the bundle below, never inline), requests only to
// this origin's API, and no form posts anywhere: the dashboard sends its key in a header from
// script, so no cookie or form carries a credential a forged request could borrow.
const CSP = pageCsp({
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'form-action': "'none'",
})

// Inline, so that the browser does not ask for /favicon.ico, which the service has not (a 404 in the
// console on every load); a data: image is what the CSP's img-src allows besides this origin.
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#4338ca"/>' +
  '<path d="M19 8v11a5 5 0 0 1-10 0" fill="none" stroke="#fff" stroke-width="3.5" stroke-linecap="round"/></svg>'
const ICON = `<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,${encodeURIComponent(ICON_SVG)}">`

const SHELL = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Jackdaw dashboard</title>${ICON}<link rel="stylesheet" href="/dashboard/app.css"></head>
<body><div id="app"><noscript>The dashboard needs JavaScript.</noscript></div>
<script type="module" src="/dashboard/app.js"></script></body></html>
`

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Jackdaw dashboard</title>${ICON}</head>
<body><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>, which builds it).</p></body></html>
`

const ASSETS = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const

function secured(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
}

/**
 * The dashboard: one page at /dashboard whose script (dashboard/ in the repository, bundled by
 * `npm run build`) signs in with a secret key, kept in the tab's sessionStorage only, and calls
 * the /v2 API with it. Views are addressed by the URL's fragment (#/charges/ch_…).
 */
export const dashboardRoutes: FastifyPluginAsync<{ bundleDir?: string }> = async (app, opts) => {
  const dir = opts.bundleDir ?? DASHBOARD_BUNDLE_DIR
  // read once: a rebuilt bundle is served after the service restarts
  const cache = new Map<string, Buffer | null>()
  const asset = async (name: keyof typeof ASSETS) => {
    if (!cache.has(name)) cache.set(name, await readFile(path.join(dir, name)).catch(() => null))
    return cache.get(name) ?? null
  }

  app.get('/dashboard', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => {
    const built = (await asset('app.js')) !== null
    return secured(reply)
      .code(built ? 200 : 503)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(built ? SHELL : NOT_BUILT)
  })

  for (const name of Object.keys(ASSETS) as (keyof typeof ASSETS)[]) {
    app.get(`/dashboard/${name}`, { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => {
      const body = await asset(name)
      if (!body) return secured(reply).code(404).type('text/plain').send('not built: run npm run build')
      return secured(reply).type(ASSETS[name]).header('cache-control', 'no-cache').send(body)
    })
  }
}
