import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AuthorizeOutcome, OperationOutcome, PaymentRequest } from '../../src/processor/processor.js'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'

/**
 * What a processor answers is kept and shown (failure_data, events, notify calls). A gateway that
 * echoes the card back, or answers outside the contract, must not put card data in any of them
 * nor break the charge.
 */

const NUMBER = '5555555555554444'
const CVC = '8371'

type Answer = (req: PaymentRequest) => unknown

/** A processor whose authorization and void answer as a test sets. */
class ScriptedProcessor extends Simulator {
  answer: Answer = (req) => super.authorize(req)
  voidAnswer: unknown = { outcome: 'succeeded' }
  override async authorize(req: PaymentRequest): Promise<AuthorizeOutcome> {
    return (await this.answer(req)) as AuthorizeOutcome
  }
  override async void(): Promise<OperationOutcome> {
    return this.voidAnswer as OperationOutcome
  }
}

const processor = new ScriptedProcessor()
let t: TestApp
beforeAll(async () => {
  t = await testApp({ testProcessor: processor })
})
afterAll(() => t.close())

async function charge(card: Record<string, unknown> = {}) {
  const src = await t.sk.post('/v2/sources/', cardSource({ number: NUMBER, cvc: CVC, ...card }))
  expect(src.status, src.text).toBe(200)
  return t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
}

/** Every stored row of the charge and its events, as text. */
async function stored(chargeId: string): Promise<string> {
  const rows = await t.db.query<{ j: string }>(
    `SELECT row_to_json(c)::text AS j FROM charges c WHERE id = $1
     UNION ALL SELECT row_to_json(e)::text FROM events e WHERE e.data::text LIKE '%' || $1 || '%'`,
    [chargeId],
  )
  expect(rows.rows.length).toBeGreaterThan(1)
  return rows.rows.map((r) => r.j).join('\n')
}

const holdsCardData = (text: string) =>
  text.includes(NUMBER) || text.includes('5555 5555 5555 4444') || new RegExp(`(?<!\\d)${CVC}(?!\\d)`).test(text)

describe("a processor's answer", () => {
  it('is kept without the card number and the security code a gateway echoes in a decline', async () => {
    processor.answer = (req) => ({
      outcome: 'declined',
      reference: 'gw_ref_1',
      failure: {
        code: 'do_not_honor',
        reason: `declined for card ${req.card?.number} cvc ${req.card?.cvc}`,
        next_steps: `Card 5555 5555 5555 4444 cannot be used`,
        provider_response: {
          echo: { card: { number: req.card?.number, cvc: req.card?.cvc, exp: '12/30' } },
          cvv2: req.card?.cvc,
          pan_as_number: Number(req.card?.number),
          notes: [`pan=${req.card?.number}`, 'kept as is'],
        },
      },
    })
    const res = await charge()
    expect(res.status, res.text).toBe(201)
    expect(res.body.status).toBe('failed')
    expect(res.body.failure_data.code).toBe('do_not_honor')
    expect(res.body.failure_data.reason).toBe('declined for card [redacted] cvc [redacted]')
    expect(res.body.failure_data.provider_response).toMatchObject({
      echo: { card: { number: '[redacted]', cvc: '[redacted]', exp: '12/30' } },
      cvv2: '[redacted]',
      pan_as_number: '[redacted]',
      notes: ['pan=[redacted]', 'kept as is'],
    })
    expect(holdsCardData(res.text)).toBe(false)
    expect(holdsCardData(await stored(res.body.id))).toBe(false)
    expect(t.logs.filter(holdsCardData)).toEqual([])
  })

  it('with a reference that holds a card number is not one: the charge fails as the processor failing', async () => {
    processor.answer = (req) => ({ outcome: 'authorized', reference: `ref_${req.card?.number}` })
    const res = await charge()
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ status: 'failed', authorized: false })
    expect(res.body.failure_data.code).toBe('processor_unavailable')
    expect(holdsCardData(await stored(res.body.id))).toBe(false)
  })

  it('finds card data however a gateway writes it: beside other numbers, in groups, under any name', async () => {
    processor.answer = () => ({
      outcome: 'declined',
      failure: {
        code: 'do_not_honor',
        reason: `card ${NUMBER} 2025 failed, txn 123456 4000056655665556; security code is ${CVC}`,
        next_steps: `card_cvv=${CVC}; "cvc" : "${CVC}"; card 5555-5555-5555-4444, 4111 - 1111 - 1111 - 1111`,
        provider_response: {
          card_cvc: CVC,
          cvv2Value: CVC,
          'card[cvc]': CVC,
          avs: `cvc_check=${CVC}`,
          echoed: CVC,
          negative: -Number(NUMBER),
          escaped: '5555%205555%205555%204444',
          spaced: '5555\u00a05555\u00a05555\u00a04444',
        },
      },
    })
    const res = await charge()
    expect(res.status, res.text).toBe(201)
    const kept = JSON.stringify(res.body.failure_data)
    expect(holdsCardData(kept), kept).toBe(false)
    for (const other of ['4000056655665556', '4111 - 1111 - 1111 - 1111', '5555\u00a05555'])
      expect(kept).not.toContain(other)
    expect(res.body.failure_data.reason).toBe(
      'card [redacted] 2025 failed, txn 123456 [redacted]; security code is [redacted]',
    )
    expect(holdsCardData(await stored(res.body.id))).toBe(false)
  })

  it('finds a number split by runs of separators, and a security code under its other labels', async () => {
    const splits = ['--', '   ', ' -- ', ', ', '\u2013', ' \u2013 ']
    processor.answer = () => ({
      outcome: 'declined',
      failure: {
        code: 'do_not_honor',
        reason: splits.map((s) => `card ${['5555', '5555', '5555', '4444'].join(s)} declined`).join('; '),
        next_steps: `CVV2 ${CVC} did not match; cvv2=${CVC}; CVC2: ${CVC}; CID ${CVC} mismatch`,
        provider_response: { message: `card 4111 -- 1111 -- 1111 -- 1111; CID: ${CVC}`, cid: CVC },
      },
    })
    const res = await charge()
    expect(res.status, res.text).toBe(201)
    const kept = JSON.stringify(res.body.failure_data)
    expect(kept).not.toMatch(/5555\D{1,4}5555|4111\D{1,4}1111/)
    expect(holdsCardData(kept), kept).toBe(false)
    expect(res.body.failure_data.reason).toBe(splits.map(() => 'card [redacted] declined').join('; '))
    expect(res.body.failure_data.next_steps).toBe(
      'CVV2 [redacted] did not match; cvv2=[redacted]; CVC2: [redacted]; CID [redacted] mismatch',
    )
    expect(holdsCardData(await stored(res.body.id))).toBe(false)
  })

  it("keeps a word that only holds a security code's label: a decision is not a CID", async () => {
    processor.answer = () => ({
      outcome: 'declined',
      failure: {
        code: 'do_not_honor',
        reason: 'Issuer decided 1234 times',
        next_steps: 'Acid test 567',
        provider_response: {},
      },
    })
    const res = await charge()
    expect(res.body.failure_data).toMatchObject({ reason: 'Issuer decided 1234 times', next_steps: 'Acid test 567' })
  })

  it('with a reference that holds the card number, however split, is not one', async () => {
    processor.answer = () => ({ outcome: 'authorized', reference: 'tok-5555-5555-5555-4444' })
    const res = await charge()
    expect(res.body.status, res.text).toBe('failed')
    expect(holdsCardData(await stored(res.body.id))).toBe(false)
  })

  it("keeps a decline's own details that only look like card data: dates, times, phone numbers", async () => {
    processor.answer = () => ({
      outcome: 'declined',
      reference: null,
      cvcCheck: null,
      failure: {
        code: 'do_not_honor',
        reason: 'Declined at 2030-01-01, trace 1700000000000',
        next_steps: 'Call 555 1234',
        provider_response: { processed_at_ms: 1700000000000, phone: { number: '555' }, ['__proto__']: 'kept' },
      },
    })
    // the security code is 2030: a year in the text is not taken for it
    const res = await charge({ cvc: '2030' })
    expect(res.status, res.text).toBe(201)
    expect(res.body.failure_data).toEqual({
      code: 'do_not_honor',
      reason: 'Declined at 2030-01-01, trace 1700000000000',
      next_steps: 'Call 555 1234',
      provider_response: JSON.parse('{"processed_at_ms":1700000000000,"phone":{"number":"555"},"__proto__":"kept"}'),
    })
  })

  it("takes a processor's own long numeric reference, and members sent as null", async () => {
    processor.answer = () => ({
      outcome: 'authorized',
      reference: '8815658961765250',
      cvcCheck: null,
      bankAccount: null,
    })
    const res = await charge()
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ status: 'succeeded', authorized: true })
    const ref = await t.db.query('SELECT processor_ref FROM charges WHERE id = $1', [res.body.id])
    expect(ref.rows[0]?.processor_ref).toBe('8815658961765250')
  })

  it('with details nested deeper than the stack declines the charge, keeping none of them, and erases the code', async () => {
    let deep: unknown = { end: true }
    for (let i = 0; i < 20_000; i++) deep = i % 2 ? { a: deep } : [deep]
    processor.answer = () => ({
      outcome: 'declined',
      failure: { code: 'do_not_honor', reason: 'Declined', next_steps: '', provider_response: { deep } },
    })
    const res = await charge()
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ status: 'failed', failure_data: { code: 'do_not_honor', provider_response: {} } })
    const kept = await t.db.query('SELECT card_cvc_enc FROM sources WHERE id = $1', [res.body.source.id])
    expect(kept.rows[0]?.card_cvc_enc).toBeNull()
    // a few levels are kept as sent
    processor.answer = () => ({
      outcome: 'declined',
      failure: { code: 'do_not_honor', reason: 'Declined', next_steps: '', provider_response: { a: [{ b: [1] }] } },
    })
    expect((await charge()).body.failure_data.provider_response).toEqual({ a: [{ b: [1] }] })
  })

  it('outside the contract fails the charge, never the request', async () => {
    for (const answer of [
      { outcome: 'approved', reference: 'x' },
      { outcome: 'authorized' },
      { outcome: 'action_required', reference: 'r1', step: 'telepathy' },
      { outcome: 'declined', failure: { code: 'x' } },
      null,
      'authorized',
    ]) {
      processor.answer = () => answer
      const res = await charge()
      expect(res.status, JSON.stringify(answer)).toBe(201)
      expect(res.body.status, JSON.stringify(answer)).toBe('failed')
      expect(res.body.failure_data.code).toBe('processor_unavailable')
    }
  })

  it('that throws an error of its own, repeating the card, is a fault whose log line keeps no card number', async () => {
    processor.answer = () => {
      const err = new Error('gateway could not read 5555 - 5555 - 5555 - 4444') as Error & { detail?: string }
      err.detail = `card ${NUMBER} expired`
      throw err
    }
    const res = await charge()
    expect(res.status, res.text).toBe(500)
    expect(res.body.error.code).toBe('internal_error')
    const logged = t.logs.filter((line) => line.includes('unhandled error'))
    expect(logged.length).toBeGreaterThan(0)
    expect(logged.join('')).toContain('gateway could not read [redacted]')
    expect(t.logs.join('')).not.toMatch(/5555\D{0,3}5555\D{0,3}5555\D{0,3}4444/)
  })

  it("shows only the last four digits of a linked bank account's number", async () => {
    const src = await t.sk.post('/v2/sources/', { type: 'transfer_a', redirect: REDIRECT })
    expect(src.status, src.text).toBe(200)
    processor.answer = () => ({
      outcome: 'authorized',
      reference: 'gw_bank_1',
      bankAccount: {
        reference_id: 'bnk_1',
        bank_type: 'transfer_a',
        bank_code: 'JDTB',
        account_name: 'Ann Lee',
        account_number: 'NL91 ABNA 0417 1643 00',
        account_type: 'savings',
        expires_at: '2030-01-01T00:00:00.000000Z',
      },
    })
    const res = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    expect(res.status, res.text).toBe(201)
    expect(res.body.status).toBe('succeeded')
    expect(res.body.source.bank_account.account_number).toBe('******4300')
  })

  it("keeps a bank link's expiry in the API's form, whatever offset the processor wrote it in", async () => {
    const link = (expires_at: string) => () => ({
      outcome: 'authorized',
      reference: 'gw_bank_2',
      bankAccount: {
        reference_id: 'bnk_2',
        bank_type: 'transfer_a',
        bank_code: 'JDTB',
        account_name: 'Ann Lee',
        account_number: '12345678',
        account_type: 'savings',
        expires_at,
      },
    })
    const charge = async () => {
      const src = await t.sk.post('/v2/sources/', { type: 'transfer_a', redirect: REDIRECT })
      return t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
    }
    // the same instant: 06:40:31 at -05:00 is 11:40:31 UTC, which compares rightly with the API's times
    processor.answer = link('2027-11-27T06:40:31-05:00')
    const res = await charge()
    expect(res.body.status, res.text).toBe('succeeded')
    expect(res.body.source.bank_account.expires_at).toBe('2027-11-27T11:40:31.000000Z')
    // a link whose expiry is no time is outside the contract: the charge fails as the processor failing
    processor.answer = link('next year')
    const refused = await charge()
    expect(refused.body).toMatchObject({ status: 'failed', failure_data: { code: 'processor_unavailable' } })
  })

  it('to a void outside the contract is not taken for a void done', async () => {
    processor.answer = (req) => Simulator.prototype.authorize.call(processor, req)
    const src = await t.sk.post('/v2/sources/', cardSource())
    const held = await t.sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, capture: false })
    expect(held.body).toMatchObject({ status: 'succeeded', captured: false })
    processor.voidAnswer = { outcome: 'voided' }
    const res = await t.sk.post(`/v2/charges/${held.body.id}/void`)
    expect(res.status, res.text).toBeGreaterThanOrEqual(500)
    expect(res.body.error.code).not.toBe('internal_error')
    processor.voidAnswer = { outcome: 'succeeded' }
    const now = await t.sk.get(`/v2/charges/${held.body.id}`)
    expect(now.body.status).toBe('succeeded')
  })
})
