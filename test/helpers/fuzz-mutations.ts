import fc from 'fast-check'
import { longString, toText, weirdString, weirdValue } from './fuzz-values.js'

/** fast-check arbitraries of one-field mutations of a valid body, and the paths inside a JSON value. */

type Path = (string | number)[]

function pathsOf(v: unknown, prefix: Path = []): Path[] {
  const out: Path[] = []
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push([...prefix, i], ...pathsOf(x, [...prefix, i]))
    })
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) out.push([...prefix, k], ...pathsOf(x, [...prefix, k]))
  }
  return out
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> | undefined {
  let cur = root as Record<string | number, unknown>
  for (const p of path.slice(0, -1)) cur = cur?.[p] as Record<string | number, unknown>
  return cur
}

function retype(v: unknown): unknown {
  if (typeof v === 'string') return /^\d+$/.test(v) ? Number(v) : [v]
  if (typeof v === 'number') return String(v)
  if (typeof v === 'boolean') return String(v)
  if (v === null) return {}
  if (Array.isArray(v)) return v.length > 0 ? v[0] : null
  return [v]
}

type Mutation = 'remove' | 'replace' | 'retype' | 'extra' | 'long' | 'unicode' | 'nest'

/** A valid body with one field removed, replaced, retyped, stretched or joined by an extra one. */
export const mutatedBody = (valid: fc.Arbitrary<unknown>) =>
  fc
    .tuple(
      valid,
      fc.nat(),
      fc.constantFrom<Mutation>('remove', 'replace', 'retype', 'extra', 'long', 'unicode', 'nest'),
      weirdValue,
      weirdString,
      longString,
    )
    .map(([body, pick, op, value, key, long]) => {
      const copy = structuredClone(body) as Record<string | number, unknown>
      const paths = pathsOf(copy)
      const path = paths.length > 0 ? (paths[pick % paths.length] as Path) : []
      const parent = path.length > 0 ? parentOf(copy, path) : undefined
      const last = path[path.length - 1] as string | number
      if (op === 'extra' || !parent) {
        const target = parent && typeof parent[last] === 'object' && parent[last] !== null ? parent[last] : copy
        ;(target as Record<string, unknown>)[key || 'extra'] = value
      } else if (op === 'remove') {
        if (Array.isArray(parent)) parent.splice(last as number, 1)
        else delete parent[last]
      } else if (op === 'replace') parent[last] = value
      else if (op === 'retype') parent[last] = retype(parent[last])
      else if (op === 'long') parent[last] = long
      else if (op === 'unicode') parent[last] = `${String(parent[last])}${key}`
      else parent[last] = [[{ [last]: parent[last] }]]
      return toText(copy)
    })
