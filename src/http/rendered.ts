import { LRUCache } from 'lru-cache'
import type { Versioned } from '../services/views.js'

/** Renderings a process keeps when nothing else is set. */
export const DEFAULT_RENDERED_ENTRIES = 10_000

export interface RenderedSettings {
  /** renderings kept; 0 keeps none, and every object is read and rendered again */
  entries: number
  /**
   * how long one is kept at most: row versions are transaction ids, which PostgreSQL counts round
   * in 32 bits, so a version is only known to be unique within far less time than it takes to
   * count round
   */
  ttlMs?: number
}

/**
 * Objects rendered as JSON by their response schema's serializer, each kept with the version of
 * the rows it was made from. A list asks the store only for its page's ids and versions, and reads
 * and renders again only the objects whose version is not the one kept: most of a page's cost
 * (building it in the database, parsing it, serializing it again) is then paid once per change of
 * an object, not once per read.
 */
export function renderedObjects<V>(settings: RenderedSettings) {
  const kept =
    settings.entries > 0
      ? new LRUCache<string, { version: string; json: string }>({
          max: settings.entries,
          ttl: settings.ttlMs ?? 600_000,
        })
      : undefined

  /** The JSON of each object of `page`, in its order; `load` reads the ones not kept as they are. */
  async function render(
    page: readonly { id: string; version: string }[],
    load: (ids: string[]) => Promise<Versioned<V>[]>,
    serialize: (view: V) => string,
  ): Promise<string[]> {
    const json: (string | undefined)[] = page.map((o) => {
      const found = kept?.get(o.id)
      return found?.version === o.version ? found.json : undefined
    })
    const missing = page.filter((_, i) => json[i] === undefined).map((o) => o.id)
    if (missing.length === 0) return json as string[]
    // read after the page, so possibly newer than it: the object as it is now
    const loaded = new Map((await load(missing)).map((o) => [o.id, o]))
    return page.map((o, i) => {
      const known = json[i]
      if (known !== undefined) return known
      const fresh = loaded.get(o.id)
      if (!fresh) throw new Error(`${o.id} of a page could not be read again`)
      const text = serialize(fresh.view)
      kept?.set(o.id, { version: fresh.version, json: text })
      return text
    })
  }

  return { render }
}

/** A list object around items already serialized, in the order of the list schema's fields. */
export function listJson(next: string | null, items: readonly string[]): string {
  return `{"object":"list","next":${JSON.stringify(next)},"data":[${items.join(',')}]}`
}
