import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Client, cardSource, type Reply, type TestApp } from '../helpers/app.js'
import {
  countCustomers,
  countSources,
  customerBody,
  expectFresh,
  expectReplayOf,
  idem,
  key,
  t,
  useIdempotencyApp,
} from './idempotency-harness.js'

/**
 * One Idempotency-Key raced: by concurrent requests in one process, and, on PostgreSQL, across two
 * processes; either way one object is created.
 */

useIdempotencyApp()

describe('one key, concurrent requests in one process', () => {
  it('10 identical requests at once create one customer', async () => {
    const k = key()
    const body = customerBody()
    const results = await Promise.all(Array.from({ length: 10 }, () => t.sk.post('/v2/customers/', body, idem(k))))
    const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined)
    expect(created).toHaveLength(1)
    for (const r of results) {
      if (r === created[0]) continue
      if (r.status === 409) expect(r.body.error.code).toBe('idempotency_key_in_use')
      else expectReplayOf(r, created[0] as Reply)
    }
    expect(await countCustomers(body.email)).toBe(1)
  })
})

describe('one key across two processes (PostgreSQL)', () => {
  let twin: TestApp
  beforeAll(async () => {
    twin = await t.twin()
  })
  afterAll(() => twin.close())

  it('a key used on one process is replayed on the other', async () => {
    const k = key()
    const body = customerBody()
    const first = await t.sk.post('/v2/customers/', body, idem(k))
    expectFresh(first, 201)
    expectReplayOf(await twin.sk.post('/v2/customers/', body, idem(k)), first)
    expect(await countCustomers(body.email)).toBe(1)
  })

  it('10 identical requests at once: one creates, the others wait (409) or get its answer', async () => {
    for (let round = 0; round < 3; round++) {
      const k = key()
      const body = customerBody()
      const clients: Client[] = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? t.sk : twin.sk))
      const results = await Promise.all(clients.map((c) => c.post('/v2/customers/', body, idem(k))))
      const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined)
      expect(created).toHaveLength(1)
      const original = created[0] as Reply
      for (const r of results) {
        if (r === original) continue
        if (r.status === 409) {
          expect(r.body.error.code).toBe('idempotency_key_in_use')
        } else {
          expectReplayOf(r, original)
        }
      }
      expect(await countCustomers(body.email)).toBe(1)
      expectReplayOf(await twin.sk.post('/v2/customers/', body, idem(k)), original)
    }
  })

  it('10 identical source creations at once make one source', async () => {
    const k = key()
    const before = await countSources()
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? t.pk : twin.pk).post('/v2/sources/', cardSource(), idem(k))),
    )
    const created = results.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)
    expect(created).toHaveLength(1)
    for (const r of results) {
      expect([200, 409]).toContain(r.status)
      if (r.status === 200) expect(r.body.id).toBe(created[0]?.body.id)
    }
    expect(await countSources()).toBe(before + 1)
  })
})
