import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import { sharedStatement } from '../../src/store/batch.js'
import { buildApp, type Client, cardSource, client, type Json, recordingDb } from '../helpers/app.js'
import { type TestStore, testStore } from '../helpers/store.js'

/**
 * Concurrent requests of one kind share a statement (store/batch.ts): a retrieve or an update of a
 * customer, a new source, a new charge and its outcome, a page of charges. Each request is
 * answered with its own result all the same, sees only the objects of its own account and mode,
 * and one that cannot be served fails alone.
 */
describe('requests that share a statement', () => {
  let store: TestStore
  let app: App
  let sk: Client
  const statements: string[] = []
  /** how many statements that start with `head` reached the store since `from` */
  const sent = (head: RegExp, from: number) => statements.slice(from).filter((s) => head.test(s.trim())).length
  /** the statement that records new charges */
  const NEW_CHARGES =
    /^WITH v AS \(\s*SELECT \* FROM unnest\(\$1::text\[\], \$2::text\[\], \$3::boolean\[\], \$4::text\[\], \$5::text\[\], \$6::bigint\[\]/

  beforeAll(async () => {
    store = await testStore()
    ;({ app } = await buildApp(recordingDb(store.db, statements), new Vault(randomBytes(32))))
    const account = await app.services.accounts.create('Shared statements')
    sk = client(app, account.sk_test_key)
  })
  afterAll(async () => {
    await app?.close()
    await store?.close()
  })

  const all = <T>(n: number, call: (i: number) => Promise<T>) =>
    Promise.all(Array.from({ length: n }, (_, i) => call(i)))

  it('creates 20 sources at once, each with its own card, in fewer statements than sources', async () => {
    const from = statements.length
    const made = await all(20, (i) =>
      sk.post('/v2/sources/', cardSource({ name: `Payer ${i}`, exp_month: String(1 + (i % 12)) })),
    )
    expect(made.map((r) => r.status)).toEqual(made.map(() => 200))
    expect(made.map((r) => r.body.card.name)).toEqual(made.map((_, i) => `Payer ${i}`))
    expect(made.map((r) => r.body.card.exp_month)).toEqual(made.map((_, i) => String(1 + (i % 12))))
    expect(new Set(made.map((r) => r.body.id)).size).toBe(20)
    for (const [i, r] of made.entries()) {
      const again = await sk.get(`/v2/sources/${r.body.id}`)
      expect(again.body.card.name).toBe(`Payer ${i}`)
    }
    expect(sent(/^INSERT INTO sources/, from)).toBeLessThan(20)
  })

  it('charges 20 sources at once, each charge its own amount and source, in fewer statements than charges', async () => {
    const sources = await all(20, () => sk.post('/v2/sources/', cardSource()))
    const from = statements.length
    const charged = await all(20, (i) =>
      sk.post('/v2/charges/', { amount: 1000 + i, currency: 'usd', source: sources[i]?.body.id, description: `c${i}` }),
    )
    for (const [i, r] of charged.entries()) {
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      expect(r.body).toMatchObject({ amount: 1000 + i, description: `c${i}`, status: 'succeeded' })
      expect(r.body.source.id).toBe(sources[i]?.body.id)
      expect(r.body.source.used).toBe(true)
      const stored = await sk.get(`/v2/charges/${r.body.id}`)
      expect(stored.body).toEqual(r.body)
    }
    // the charge recorded before the processor is asked, then its outcome, each shared
    expect(sent(NEW_CHARGES, from)).toBeLessThan(20)
    expect(sent(/^WITH v AS \(\s*SELECT \* FROM unnest\(\$1::text\[\], \$2::timestamptz\[\]/, from)).toBeLessThan(20)
    const events = await sk.get('/v2/events/?limit=20')
    expect(new Set(events.body.data.map((e: Json) => e.data.object?.id ?? e.data.id)).size).toBe(20)
  })

  it('keeps JSON values whole in a shared statement: quotes, backslashes, line breaks, other scripts', async () => {
    const values = ['say "hi"', 'C:\\path\\to', 'two\nlines\ttab', 'null', '{"a":[1]}', 'Zoë 日本 🐦', '\\"', '\u2028']
    const sources = await all(values.length, (i) => sk.post('/v2/sources/', cardSource({ name: `Payer ${i}` })))
    const charged = await all(values.length, (i) =>
      sk.post('/v2/charges/', {
        amount: 100 + i,
        currency: 'usd',
        source: sources[i]?.body.id,
        metadata: { note: values[i] as string, [`k"${i}\\`]: i },
      }),
    )
    for (const [i, r] of charged.entries()) {
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      expect(r.body.metadata).toEqual({ note: values[i], [`k"${i}\\`]: i })
      expect((await sk.get(`/v2/charges/${r.body.id}`)).body.metadata).toEqual(r.body.metadata)
    }
    const events = await sk.get(`/v2/events/?limit=${values.length}`)
    const notes = events.body.data.map((e: Json) => e.data.object?.metadata?.note ?? e.data.metadata?.note)
    expect(notes.sort()).toEqual([...values].sort())
  })

  it('takes a single-use source named by two charges at once for one of them only', async () => {
    const sources = await all(10, () => sk.post('/v2/sources/', cardSource()))
    const ids = sources.map((s) => s.body.id as string)
    // the first source is named twice
    const charged = await all(11, (i) =>
      sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: ids[i === 10 ? 0 : i] }),
    )
    const onFirst = [charged[0], charged[10]].map((r) => r?.status).sort()
    expect(onFirst).toEqual([201, 400])
    expect([charged[0], charged[10]].find((r) => r?.status === 400)?.body.error.code).toBe('source_used')
    expect(charged.slice(1, 10).map((r) => r.status)).toEqual(Array(9).fill(201))
  })

  it('retrieves and updates customers at once, each answer its own customer as its own update left it', async () => {
    const customers = await all(10, (i) => sk.post('/v2/customers/', { email: `p${i}@example.com`, description: 'x' }))
    const ids = customers.map((c) => c.body.id as string)
    const from = statements.length
    const read = await all(30, (i) => sk.get(`/v2/customers/${ids[i % 10]}`))
    expect(read.map((r) => r.body.email)).toEqual(read.map((_, i) => `p${i % 10}@example.com`))
    expect(sent(/^SELECT r\.n/, from)).toBeLessThan(30)
    // two updates of each customer at once: each answer shows its own, and the last one stays
    const updated = await all(20, (i) =>
      sk.put(`/v2/customers/${ids[i % 10]}`, { description: `update ${i}`, metadata: { i: String(i) } }),
    )
    expect(updated.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(updated.map((r) => r.body.description)).toEqual(updated.map((_, i) => `update ${i}`))
    expect(updated.map((r) => r.body.metadata.i)).toEqual(updated.map((_, i) => String(i)))
    const after = await all(10, (i) => sk.get(`/v2/customers/${ids[i]}`))
    expect(after.map((r) => r.body.description)).toEqual(after.map((_, i) => `update ${i + 10}`))
    // a customer that is not there fails its own request only
    const mixed = await all(6, (i) => sk.get(`/v2/customers/${i === 3 ? 'cus_nope' : ids[i]}`))
    expect(mixed.map((r) => r.status)).toEqual([200, 200, 200, 404, 200, 200])
  })

  it('answers the same page asked at once with one reading, and a bad cursor fails its own request only', async () => {
    const from = statements.length
    const pages = await all(12, (i) =>
      sk.get(i === 5 ? '/v2/charges/?limit=3&start_after=ch_nope' : '/v2/charges/?limit=3'),
    )
    expect(pages[5]?.status).toBe(400)
    expect(pages[5]?.body.error.code).toBe('cursor_invalid')
    const good = pages.filter((_, i) => i !== 5)
    expect(good.map((r) => r.status)).toEqual(Array(11).fill(200))
    for (const r of good) expect(r.body).toEqual(good[0]?.body)
    expect(good[0]?.body.data).toHaveLength(3)
    expect(sent(/^SELECT coalesce\(json_agg\(x ORDER BY x\.id DESC\)/, from)).toBeLessThan(11)
    // a page asked after a charge is made shows it
    const src = await sk.post('/v2/sources/', cardSource())
    const made = await sk.post('/v2/charges/', { amount: 777, currency: 'usd', source: src.body.id })
    const [next] = await all(3, () => sk.get('/v2/charges/?limit=3'))
    expect(next?.body.data[0].id).toBe(made.body.id)
  })

  describe('of two accounts, in both modes', () => {
    interface Scoped {
      sk: Client
      live: boolean
    }
    /** a secret key of each account and mode: A's test and live keys, then B's */
    let scopes: Scoped[]
    const scope = (i: number) => scopes[i % 4] as Scoped
    beforeAll(async () => {
      const a = await app.services.accounts.create('Shared A')
      const b = await app.services.accounts.create('Shared B')
      scopes = [a, b].flatMap((account) => [
        { sk: client(app, account.sk_test_key), live: false },
        { sk: client(app, account.sk_live_key), live: true },
      ])
    })
    /** each of the four keys asking for the object of each of the four in turn, `rounds` times */
    const pairs = (rounds: number) =>
      Array.from({ length: 16 * rounds }, (_, i) => ({ asker: i % 4, owner: Math.floor(i / 4) % 4 }))

    it('creates sources of every account and mode in shared statements, each in its own account and mode', async () => {
      const from = statements.length
      const made = await all(20, (i) => scope(i).sk.post('/v2/sources/', cardSource()))
      expect(sent(/^INSERT INTO sources/, from)).toBeLessThan(20)
      expect(made.map((r) => r.status)).toEqual(Array(20).fill(200))
      expect(made.map((r) => r.body.livemode)).toEqual(made.map((_, i) => scope(i).live))
      // each source asked for with every key: found with its own only
      const found = await all(80, (i) => scope(i).sk.get(`/v2/sources/${made[Math.floor(i / 4)]?.body.id}`))
      expect(found.map((r) => r.status)).toEqual(found.map((_, i) => (i % 4 === Math.floor(i / 4) % 4 ? 200 : 404)))
    })

    it("retrieves and updates customers of every account and mode at once: each key finds its own, the others' are 404 and unchanged", async () => {
      const made = await all(4, (i) =>
        scope(i).sk.post('/v2/customers/', { email: `s${i}@example.com`, description: 'x' }),
      )
      const ids = made.map((c) => c.body.id as string)
      const asked = pairs(3)
      const from = statements.length
      const read = await all(asked.length, (i) => {
        const { asker, owner } = asked[i] as { asker: number; owner: number }
        return scope(asker).sk.get(`/v2/customers/${ids[owner]}`)
      })
      expect(sent(/^SELECT r\.n/, from)).toBeLessThan(asked.length)
      expect(read.map((r) => r.status)).toEqual(asked.map((p) => (p.asker === p.owner ? 200 : 404)))
      expect(read.filter((r) => r.status === 200).map((r) => r.body.id)).toEqual(
        asked.filter((p) => p.asker === p.owner).map((p) => ids[p.owner]),
      )
      const updated = await all(16, (i) => {
        const { asker, owner } = asked[i] as { asker: number; owner: number }
        return scope(asker).sk.put(`/v2/customers/${ids[owner]}`, { description: `by ${asker}` })
      })
      expect(updated.map((r) => r.status)).toEqual(asked.slice(0, 16).map((p) => (p.asker === p.owner ? 200 : 404)))
      const after = await all(4, (i) => scope(i).sk.get(`/v2/customers/${ids[i]}`))
      expect(after.map((r) => r.body.description)).toEqual(['by 0', 'by 1', 'by 2', 'by 3'])
    })

    it("charges and lists the charges of two accounts at once: each sees its own only, and another's source is 404", async () => {
      const [aTest, , bTest] = scopes as Scoped[]
      const by = (i: number) => ((i % 2 ? bTest : aTest) as Scoped).sk
      const sources = await all(12, (i) => by(i).post('/v2/sources/', cardSource()))
      const from = statements.length
      // the last two name a source of the other account
      const charged = await all(12, (i) =>
        by(i).post('/v2/charges/', { amount: 100 + i, currency: 'usd', source: sources[i < 10 ? i : i - 1]?.body.id }),
      )
      expect(sent(NEW_CHARGES, from)).toBeLessThan(10)
      expect(charged.map((r) => r.status)).toEqual([...Array(10).fill(201), 404, 404])
      expect(charged.slice(10).map((r) => r.body.error.param)).toEqual(['source', 'source'])
      const ownIds = [0, 1].map((odd) => charged.filter((_, i) => i < 10 && i % 2 === odd).map((r) => r.body.id))
      const pageFrom = statements.length
      const pages = await all(12, (i) => scope(i).sk.get('/v2/charges/?limit=3'))
      expect(sent(/^SELECT coalesce\(json_agg\(x ORDER BY x\.id DESC\)/, pageFrom)).toBeLessThan(12)
      for (const [i, page] of pages.entries()) {
        const ids = page.body.data.map((c: Json) => c.id)
        // A's test charges, none in live mode, B's test charges, none
        if (i % 2) expect(ids).toEqual([])
        else {
          expect(ids).toHaveLength(3)
          for (const id of ids) expect(ownIds[(i % 4) / 2]).toContain(id)
        }
      }
    })
  })

  describe('a statement that fails', () => {
    /** a statement that writes its calls' ids, and fails as `fail` says once it has */
    const probe = (fail: (ids: string[]) => Error | undefined, sizes: number[]) =>
      sharedStatement(async (db, ids: string[]) => {
        sizes.push(ids.length)
        await db.query('INSERT INTO batch_probe (id) SELECT unnest($1::text[])', [ids])
        const err = fail(ids)
        if (err) throw err
        return ids
      })
    const rows = async () =>
      (await store.db.query<{ id: string }>('SELECT id FROM batch_probe ORDER BY id')).rows.map((r) => r.id)
    /** a call that runs alone, then `ids` at once while it does: they share the next statement */
    const together = async (call: (id: string) => Promise<string>, ids: string[]) => {
      const first = call('first')
      const rest = ids.map((id) =>
        call(id).then(
          (v) => ({ v }),
          (e: unknown) => ({ e }),
        ),
      )
      await first.catch(() => undefined)
      return Promise.all(rest)
    }

    it('is run again call by call when PostgreSQL refused it: only the bad call fails', async () => {
      await store.db.exec('DROP TABLE IF EXISTS batch_probe; CREATE TABLE batch_probe (id text PRIMARY KEY)')
      await store.db.query("INSERT INTO batch_probe VALUES ('taken')")
      const sizes: number[] = []
      const call = probe(() => undefined, sizes)
      const out = await together((id) => call(store.db, id), ['a', 'taken', 'b', 'c'])
      expect(sizes.slice(0, 2)).toEqual([1, 4])
      expect(out.map((o) => ('v' in o ? o.v : (o.e as { code?: string }).code))).toEqual(['a', '23505', 'b', 'c'])
      expect(await rows()).toEqual(['a', 'b', 'c', 'first', 'taken'])
    })

    it('fails every call, and runs none again, when its answer could not be read after it ran', async () => {
      await store.db.exec('DROP TABLE IF EXISTS batch_probe; CREATE TABLE batch_probe (id text PRIMARY KEY)')
      const sizes: number[] = []
      const unreadable = new TypeError('an answer that cannot be read')
      const call = probe((ids) => (ids.includes('poison') ? unreadable : undefined), sizes)
      const out = await together((id) => call(store.db, id), ['a', 'poison', 'b'])
      expect(sizes).toEqual([1, 3])
      expect(out.map((o) => ('e' in o ? o.e : o.v))).toEqual([unreadable, unreadable, unreadable])
      // written once each: a call run again would have found its own row
      expect(await rows()).toEqual(['a', 'b', 'first', 'poison'])
    })
  })
})
