/**
 * The Content-Security-Policy of the service's own pages (hosted payment pages, the dashboard):
 * nothing loads but what a page names, no page may be framed, and no <base> may redirect its
 * links. Each page adds the sources it needs.
 */
export function pageCsp(sources: Record<string, string>): string {
  const directives = { 'default-src': "'none'", ...sources, 'frame-ancestors': "'none'", 'base-uri': "'none'" }
  return Object.entries(directives)
    .map(([k, v]) => `${k} ${v}`)
    .join('; ')
}
