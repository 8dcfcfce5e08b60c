import { useEffect, useState } from 'preact/hooks'

/** A view's address in the URL's fragment: `#/charges?status=failed` → path and query. */
export interface Route {
  parts: string[]
  query: URLSearchParams
}

/** A part as written when it is no escape (`%zz`, pasted or typed): its view then says "not found". */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

function current(): Route {
  const hash = location.hash.replace(/^#/, '') || '/charges'
  const [path = '', search = ''] = hash.split('?')
  return { parts: path.split('/').filter(Boolean).map(decoded), query: new URLSearchParams(search) }
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

/**
 * The fragment of a view: `href('/charges', {status: 'failed'})`; empty values are left out. A path
 * with an id is given as its parts, `href(['charges', id])`, each escaped: an id may hold `%`, `/`,
 * `?` or `#`, which would otherwise be read as another address.
 */
export function href(path: string | readonly string[], query: Record<string, string | undefined> = {}): string {
  const at = typeof path === 'string' ? path : `/${path.map(encodeURIComponent).join('/')}`
  const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => !!e[1]))
  const search = q.toString()
  return `#${at}${search ? `?${search}` : ''}`
}
