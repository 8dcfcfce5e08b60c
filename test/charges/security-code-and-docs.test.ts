import { describe, expect, it } from 'vitest'
import { cardSource } from '../helpers/app.js'
import { authorized, processor, t, useFaultyProcessor } from './faulty-processor.js'

/**
 * The security code kept only until an authorization is decided, and the reference page and
 * OpenAPI document, on the app the processor-fault tests use (see faulty-processor.ts).
 */

useFaultyProcessor()

describe('the security code', () => {
  it('is kept encrypted until the authorization is decided, then erased', async () => {
    processor.mode = 'succeed'
    const src = await t.sk.post('/v2/sources/', cardSource({ number: '4000000000003220' }))
    const stored = async () =>
      (await t.db.query('SELECT card_cvc_enc FROM sources WHERE id = $1', [src.body.id])).rows[0] as {
        card_cvc_enc: string | null
      }
    expect((await stored()).card_cvc_enc).toMatch(/^v1:/)
    const c = await t.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id })
    expect(c.body.status).toBe('pending')
    // 3-D Secure is still open: the code is needed for the authorization that follows
    expect((await stored()).card_cvc_enc).toMatch(/^v1:/)
    const ok = await t.sk.post(`/v2/test/charges/${c.body.id}/authorize`, { decision: 'approve' })
    expect(ok.body.status).toBe('succeeded')
    expect(ok.body.source.card.cvc_checked).toBe('pass')
    expect((await stored()).card_cvc_enc).toBeNull()
  })
})

describe('the reference page', () => {
  it('is served as HTML without a key, beside the OpenAPI document', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/v2/docs/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/text\/html/)
    const doc = await t.anon.get('/v2/openapi.json')
    expect(doc.status).toBe(200)
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/v2/charges/', '/v2/customers/{cus_id}', '/v2/sources/']),
    )
  })

  it('says which bodies may be left out, and names Idempotency-Key and Request-Id', async () => {
    const { paths } = (await t.anon.get('/v2/openapi.json')).body
    for (const op of ['capture', 'void', 'refund']) {
      expect(paths[`/v2/charges/{ch_id}/${op}`].post.requestBody.required).toBe(false)
    }
    expect(paths['/v2/charges/'].post.requestBody.required).toBe(true)
    expect(paths['/v2/charges/{ch_id}/verify'].post.requestBody.required).toBe(true)
    const idempotencyKey = (op: { parameters?: { in: string; name: string }[] }) =>
      op.parameters?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key')
    expect(idempotencyKey(paths['/v2/charges/'].post)).toBeDefined()
    expect(idempotencyKey(paths['/v2/sources/'].post)).toBeDefined()
    expect(idempotencyKey(paths['/v2/charges/'].get)).toBeUndefined()
    expect(paths['/v2/customers/{cus_id}'].get.responses['200'].headers['Request-Id']).toBeDefined()
    // and a capture with no body at all is taken, as the document now says
    const c = await authorized()
    const res = await t.app.inject({
      method: 'POST',
      url: `/v2/charges/${c.id}/capture`,
      headers: { authorization: `Bearer ${t.account.sk_test_key}` },
    })
    expect(res.statusCode).toBe(200)
  })
})
