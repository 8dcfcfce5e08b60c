import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CATALOG } from '../../src/errors.js'
import { type TestApp, testApp } from '../helpers/app.js'

/** docs/api.md is the users' description of the interface: its error-code table must be the catalog. */
const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')

/** Each code of the table with the status its row gives it: `400`, or `5xx` with `(502)` after the code. */
function documentedStatuses(): Map<string, number> {
  const lines = doc.split('\n')
  const start = lines.findIndex((l) => /^\| status \| codes \|$/.test(l))
  expect(start).toBeGreaterThan(-1)
  const codes = new Map<string, number>()
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    const [, status = '', text = ''] = line.split('|').map((c) => c.trim())
    for (const m of text.matchAll(/`([a-z_]+)`(?: \((\d{3})\))?/g)) {
      const code = m[1] as string
      // a code's own type or setting named in the row is not a code
      if (code === 'card_error' || /^[A-Z]/.test(code)) continue
      codes.set(code, Number(m[2] ?? status))
    }
  }
  return codes
}

describe('docs/api.md', () => {
  it('lists every error code of the catalog with its status, and no other', () => {
    const documented = documentedStatuses()
    const catalog = new Map(Object.entries(ERROR_CATALOG).map(([code, e]) => [code, e.status as number]))
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(catalog))
  })

  it('describes the interface inside the repository: it links to nothing outside it', () => {
    for (const m of doc.matchAll(/\]\(([^)]+)\)|`(\.\.\/[^`]+)`/g)) {
      const target = m[1] ?? m[2] ?? ''
      if (/^https?:/.test(target)) continue
      expect(target).not.toMatch(/^\.\.\//)
    }
  })
})

describe('/v2/openapi.json', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await testApp()
  })
  afterAll(() => t.close())

  it('names every operation with an operationId of its own, for the clients generated from it', async () => {
    const res = await t.anon.get('/v2/openapi.json')
    expect(res.status).toBe(200)
    const paths = res.body.paths as Record<string, Record<string, { operationId?: string }>>
    const ids = Object.entries(paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ operation: `${method} ${path}`, id: op.operationId })),
    )
    expect(ids.length).toBeGreaterThan(30)
    for (const { operation, id } of ids) expect(id, operation).toMatch(/^[a-z][A-Za-z]+$/)
    expect(new Set(ids.map((o) => o.id)).size).toBe(ids.length)
    const byOperation = Object.fromEntries(ids.map((o) => [o.operation, o.id]))
    expect(byOperation['post /v2/charges/']).toBe('createCharge')
    expect(byOperation['get /v2/charges/']).toBe('listCharges')
    expect(byOperation['put /v2/customers/{cus_id}']).toBe('updateCustomer')
    expect(byOperation['post /v2/sources/']).toBe('createSource')
  })

  it('describes each tag its operations use, and names its license and server', async () => {
    const doc = (await t.anon.get('/v2/openapi.json')).body
    const used = new Set<string>(
      Object.values(doc.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap((ops) =>
        Object.values(ops).flatMap((op) => op.tags ?? []),
      ),
    )
    expect(used.size).toBeGreaterThan(5)
    const tags = doc.tags as { name: string; description: string }[]
    expect(new Set(tags.map((tag) => tag.name))).toEqual(used)
    for (const tag of tags) expect(tag.description, tag.name).toMatch(/^[A-Z].{10,}/)
    expect(doc.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' })
    expect(doc.servers).toEqual([{ url: '/' }])
  })

  it('puts text that Markdown would read as a tag in code, so the reference page shows it', async () => {
    const text = JSON.stringify((await t.anon.get('/v2/openapi.json')).body)
    // every <word> of a description stands inside backticks
    for (const m of text.matchAll(/"description":"((?:[^"\\]|\\.)*)"/g)) {
      const outside = (m[1] as string)
        .split('`')
        .filter((_, i) => i % 2 === 0)
        .join(' ')
      expect(outside, m[1]).not.toMatch(/<[a-z]+>/)
    }
  })

  it('types every enumeration as the values it lists: the source type, statuses, cvc_checked', async () => {
    const doc = (await t.anon.get('/v2/openapi.json')).body
    const enums: { at: string; schema: { type?: string; enum: unknown[] } }[] = []
    const walk = (node: unknown, at: string) => {
      if (typeof node !== 'object' || node === null) return
      if (Array.isArray((node as { enum?: unknown }).enum)) enums.push({ at, schema: node as never })
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`)
    }
    walk(doc, '#')
    expect(enums.some((e) => e.at.endsWith('/properties/type') && e.schema.enum.includes('wallet_c'))).toBe(true)
    expect(enums.some((e) => e.at.endsWith('/properties/cvc_checked'))).toBe(true)
    for (const { at, schema } of enums) {
      expect(String(schema.type), at).toMatch(/^(string|boolean)$/)
      for (const value of schema.enum) expect(typeof value, at).toBe(schema.type)
    }
  })
})
