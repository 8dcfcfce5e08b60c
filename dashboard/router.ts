import { useEffect, useState } from 'preact/hooks'

/** A view's address in the URL's fragment: `#/charges?status=failed` → path and query. */
export interface Route {
  parts: string[]
  query: URLSearchParams
}

function current(): Route {
  const hash = location.hash.replace(/^#/, '') || '/charges'
  const [path = '', search = ''] = hash.split('?')
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const changed = () => setRoute(current())
    window.addEventListener('hashchange', changed)
    return () => window.removeEventListener('hashchange', changed)
  }, [])
  return route
}

/** The fragment of a view: `href('/charges', {status: 'failed'})`; empty values are left out. */
export function href(path: string, query: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => !!e[1]))
  const search = q.toString()
  return `#${path}${search ? `?${search}` : ''}`
}
