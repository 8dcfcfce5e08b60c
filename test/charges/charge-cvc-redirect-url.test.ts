import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PaymentRequest } from '../../src/processor/processor.js'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { expectError } from '../helpers/expect.js'

/**
 * What a charge's body may add to its source: a security code for this authorization only (a
 * saved card's own is erased after its first), and where the payer returns after a hosted page
 * when the source names no redirect.
 */

/** The simulator, noting the security code each authorization was given. */
class CodesNoted extends Simulator {
  codes = new Map<string, string | undefined>()
  override authorize(req: PaymentRequest) {
    this.codes.set(req.chargeId, req.card?.cvc)
    return super.authorize(req)
  }
}

const processor = new CodesNoted()
let t: TestApp
beforeAll(async () => {
  t = await testApp({ testProcessor: processor, liveProcessor: new Simulator() })
})
afterAll(() => t.close())

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/** A customer with a card saved to it, charged once already: its own security code is gone. */
async function savedCard(number: string) {
  const made = await t.sk.post('/v2/customers/', { email: `ann.${number.slice(-4)}@example.com`, description: 'Ann' })
  expect(made.status, made.text).toBe(201)
  const customer = made.body
  const source = (await t.sk.post('/v2/sources/', cardSource({ number, cvc: '321' }))).body
  expect((await t.sk.post(`/v2/customers/${customer.id}/sources`, { source: source.id })).status).toBe(200)
  const first = await t.sk.post('/v2/charges/', {
    amount: 500,
    currency: 'usd',
    source: source.id,
    customer: customer.id,
  })
  expect(first.status).toBe(201)
  expect(processor.codes.get(first.body.id)).toBe('321')
  const kept = await t.db.query('SELECT card_cvc_enc FROM sources WHERE id = $1', [source.id])
  expect(kept.rows[0]?.card_cvc_enc).toBeNull()
  return { customer: customer.id, source: source.id }
}

describe('create charge: cvc', () => {
  it('a saved card is charged with the code sent, checked by the simulator and never stored', async () => {
    const saved = await savedCard('4242424242424242')
    const without = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', ...saved })
    expect(without.status).toBe(201)
    expect(processor.codes.get(without.body.id)).toBeUndefined()

    const res = await t.sk.post(
      '/v2/charges/',
      { amount: 700, currency: 'usd', cvc: '9071', ...saved },
      {
        'idempotency-key': 'cvc-1',
      },
    )
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body).toMatchObject({ status: 'succeeded', source: { card: { cvc_checked: 'pass' } } })
    expect(processor.codes.get(res.body.id)).toBe('9071')
    // as a value of its own: ids, times and durations may hold the same digits
    const asValue = '"9071"'
    expect(res.text).not.toContain(asValue)

    // nowhere in the store: not with the source, not with the charge, not with the idempotency record
    const stored = await t.db.query(
      `SELECT s.card_cvc_enc, to_json(c)::text AS charge, (SELECT string_agg(to_json(k)::text, '') FROM idempotency_keys k) AS keys
       FROM charges c JOIN sources s ON s.id = c.source_id WHERE c.id = $1`,
      [res.body.id],
    )
    expect(stored.rows[0]?.card_cvc_enc).toBeNull()
    expect(stored.rows[0]?.charge).not.toContain(asValue)
    expect(stored.rows[0]?.keys ?? '').not.toContain(asValue)
    expect(t.logs.join('\n')).not.toContain(asValue)

    // the retry replays the answer; the code is not asked for again
    const again = await t.sk.post(
      '/v2/charges/',
      { amount: 700, currency: 'usd', cvc: '9071', ...saved },
      {
        'idempotency-key': 'cvc-1',
      },
    )
    expect(again.body.id).toBe(res.body.id)
  })

  it('a saved card whose code the issuer refuses: failed with incorrect_cvc, cvc_checked fail', async () => {
    const saved = await savedCard('4000000000000127')
    const res = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', cvc: '555', ...saved })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ status: 'failed', failure_data: { code: 'incorrect_cvc' } })
    expect(res.body.source.card.cvc_checked).toBe('fail')
  })

  it('a saved card whose code the issuer refused succeeds once no code is sent or kept: nothing to check', async () => {
    // its first charge, with the code kept, was declined incorrect_cvc; the code then went
    const saved = await savedCard('4000000000000127')
    const again = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', ...saved })
    expect(again.body).toMatchObject({ status: 'succeeded', source: { card: { cvc_checked: 'fail' } } })
    expect(again.body.failure_data).toBeUndefined()
  })

  it('a single-use card: the code sent is checked in place of the one kept with the source', async () => {
    const source = (await t.sk.post('/v2/sources/', cardSource({ cvc: '111' }))).body
    const res = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: source.id, cvc: '222' })
    expect(res.status).toBe(201)
    expect(processor.codes.get(res.body.id)).toBe('222')
  })

  it('a source without a card: the code is ignored, as docs/api.md says, and the payer pays as usual', async () => {
    const src = (await t.sk.post('/v2/sources/', { type: 'wallet_a', redirect: REDIRECT })).body
    const res = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: src.id, cvc: '4071' })
    expect(res.status, res.text).toBe(201)
    expect(res.body.status).toBe('pending')
    expect(res.body.source.card).toBeUndefined()
    expect(res.text).not.toContain('"4071"')
    // the processor was asked, with no card and so no code
    expect(processor.codes.has(res.body.id)).toBe(true)
    expect(processor.codes.get(res.body.id)).toBeUndefined()
    const url = new URL(res.body.source.action.url)
    const paid = await answer({ action: url.pathname, token: url.searchParams.get('token') as string }, 'approve')
    expect(paid.headers.location).toBe(REDIRECT.success)
    expect((await t.sk.get(`/v2/charges/${res.body.id}`)).body.status).toBe('succeeded')
  })

  it.each(['12', '12345', 'abc', '12a', ' 123', ''])('cvc %j is 422, the value not echoed', async (cvc) => {
    const source = (await t.sk.post('/v2/sources/', cardSource())).body
    const res = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: source.id, cvc })
    expectError(res, 422, 'parameter_invalid', 'cvc')
    if (cvc.trim().length >= 2) expect(JSON.stringify(res.body)).not.toContain(cvc.trim())
    // nothing was made: the source is still free to charge
    const after = await t.sk.get(`/v2/sources/${source.id}`)
    expect(after.body.used).toBe(false)
  })
})

async function pendingCharge(source: object, extra: object) {
  const src = (await t.sk.post('/v2/sources/', source)).body
  const res = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.id, ...extra })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  expect(res.body.status).toBe('pending')
  const url = new URL(res.body.source.action.url)
  return { id: res.body.id as string, action: url.pathname, token: url.searchParams.get('token') as string }
}

const answer = (h: { action: string; token: string }, decision: string) =>
  t.anon.post(h.action, new URLSearchParams({ token: h.token, decision }).toString(), FORM)

describe('create charge: redirect_url', () => {
  const threeDs = cardSource({ number: '4000000000003220' })

  it('a source without redirect: the payer returns to redirect_url, told the charge and its outcome', async () => {
    const approved = await pendingCharge(threeDs, { redirect_url: 'https://shop.example/return?order=7' })
    const ok = await answer(approved, 'approve')
    expect(ok.status).toBe(303)
    expect(ok.headers.location).toBe(`https://shop.example/return?order=7&charge=${approved.id}&status=succeeded`)

    const declined = await pendingCharge(threeDs, { redirect_url: 'http://localhost:3000/back' })
    const no = await answer(declined, 'decline')
    expect(no.status).toBe(303)
    expect(no.headers.location).toBe(`http://localhost:3000/back?charge=${declined.id}&status=failed`)
    expect((await t.sk.get(`/v2/charges/${declined.id}`)).body.status).toBe('failed')
  })

  it("the source's own redirect wins", async () => {
    const h = await pendingCharge(
      { type: 'wallet_a', redirect: REDIRECT },
      { redirect_url: 'https://elsewhere.example/' },
    )
    const res = await answer(h, 'approve')
    expect(res.headers.location).toBe(REDIRECT.success)
  })

  it.each([
    'javascript:alert(1)',
    'ftp://shop.example/',
    '/relative/path',
    'https://user:pass@shop.example/',
    'http:shop.example',
  ])('%s is 422 and makes no charge', async (redirect_url) => {
    const source = (await t.sk.post('/v2/sources/', threeDs)).body
    const res = await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: source.id, redirect_url })
    expectError(res, 422, 'parameter_invalid', 'redirect_url')
    expect((await t.sk.get(`/v2/sources/${source.id}`)).body.used).toBe(false)
  })

  it('live mode: an http address is 422 and leaves the source to be charged; an https one is taken', async () => {
    const source = (await t.skLive.post('/v2/sources/', threeDs)).body
    expect(source.livemode).toBe(true)
    const refused = await t.skLive.post('/v2/charges/', {
      amount: 700,
      currency: 'usd',
      source: source.id,
      redirect_url: 'http://shop.example/back',
    })
    expectError(refused, 422, 'parameter_invalid', 'redirect_url')
    expect((await t.skLive.get(`/v2/sources/${source.id}`)).body.used).toBe(false)

    const taken = await t.skLive.post('/v2/charges/', {
      amount: 700,
      currency: 'usd',
      source: source.id,
      redirect_url: 'https://shop.example/back',
    })
    expect(taken.status, taken.text).toBe(201)
    expect(taken.body).toMatchObject({ livemode: true, status: 'pending' })
    const url = new URL(taken.body.source.action.url)
    const paid = await answer({ action: url.pathname, token: url.searchParams.get('token') as string }, 'approve')
    expect(paid.status).toBe(303)
    expect(paid.headers.location).toBe(`https://shop.example/back?charge=${taken.body.id}&status=succeeded`)
  })

  it('an address of exactly 2048 characters is taken', async () => {
    const base = 'https://shop.example/'
    const redirect_url = base + 'a'.repeat(2048 - base.length)
    expect(redirect_url).toHaveLength(2048)
    const h = await pendingCharge(threeDs, { redirect_url })
    const res = await answer(h, 'approve')
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(`${redirect_url}?charge=${h.id}&status=succeeded`)
  })

  it("the service's own charge and status replace any the address already has", async () => {
    const h = await pendingCharge(threeDs, {
      redirect_url: 'https://shop.example/r?charge=ch_forged&order=7&status=succeeded&charge=again',
    })
    const res = await answer(h, 'decline')
    expect(res.status).toBe(303)
    const back = new URL(res.headers.location as string)
    expect(back.origin + back.pathname).toBe('https://shop.example/r')
    expect(back.searchParams.getAll('charge')).toEqual([h.id])
    expect(back.searchParams.getAll('status')).toEqual(['failed'])
    expect(back.searchParams.get('order')).toBe('7')
  })

  it('an address of over 2048 characters is 422', async () => {
    const source = (await t.sk.post('/v2/sources/', threeDs)).body
    const redirect_url = `https://shop.example/${'a'.repeat(2048)}`
    expectError(
      await t.sk.post('/v2/charges/', { amount: 700, currency: 'usd', source: source.id, redirect_url }),
      422,
      'parameter_invalid',
      'redirect_url',
    )
  })
})
