import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Simulator } from '../../src/processor/simulator.js'
import { cardSource, client, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { expectHtml, hostedSteps, threeDs } from './hosted-harness.js'

/**
 * The hosted page a payer is sent to by `source.action.url`, for each kind of step: what it shows,
 * and where approving or declining it takes the payer and the charge (hosted-harness.ts).
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const { pending, submit, charge, openPage } = hostedSteps(() => t)

describe('hosted page: 3-D Secure', () => {
  it('approve: 303 to redirect.success, charge succeeded', async () => {
    const h = await pending(threeDs())
    const page = await openPage(h, '3-D Secure authentication')
    expect(page.text).not.toContain('4000000000003220')
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.success)
    // the redirect's own policy holds for the request that follows it
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    const after = await charge(h.charge.id)
    expect(after).toMatchObject({ status: 'succeeded', authorized: true, captured: true })
    expect(after.source.action).toBeUndefined()
    expect(after.source.card.cvc_checked).toBe('pass')
  })

  it('decline: 303 to redirect.fail, charge failed', async () => {
    const h = await pending(threeDs())
    const res = await submit(h.action, { token: h.token, decision: 'decline' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.fail)
    const after = await charge(h.charge.id)
    expect(after).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(after.failure_data.code).toBe('authentication_failed')
  })

  it('authenticates, then declines: approve leads to redirect.fail and a failed charge', async () => {
    const h = await pending(threeDs('4000000000003246'))
    await openPage(h, '3-D Secure authentication')
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.fail)
    const after = await charge(h.charge.id)
    expect(after).toMatchObject({ status: 'failed', authorized: false })
    expect(after.failure_data.code).toBe('card_declined')
  })

  it('capture false: approval authorizes without capturing', async () => {
    const h = await pending(threeDs(), { capture: false })
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.headers.location).toBe(REDIRECT.success)
    expect(await charge(h.charge.id)).toMatchObject({ status: 'succeeded', authorized: true, captured: false })
  })

  it('a card source without redirect shows an HTML result page instead of a redirect', async () => {
    const approved = await pending(cardSource({ number: '4000000000003220' }))
    expect(approved.charge.source.redirect).toBeUndefined()
    const ok = await submit(approved.action, { token: approved.token, decision: 'approve' })
    expectHtml(ok, 200)
    expect(ok.headers.location).toBeUndefined()
    expect(ok.text).toContain('Payment succeeded')
    expect(ok.text).not.toContain('<form')
    expect((await charge(approved.charge.id)).status).toBe('succeeded')

    const declined = await pending(cardSource({ number: '4000000000003220' }))
    const no = await submit(declined.action, { token: declined.token, decision: 'decline' })
    expectHtml(no, 200)
    expect(no.headers.location).toBeUndefined()
    expect(no.text).toContain('Payment failed')
    expect((await charge(declined.charge.id)).status).toBe('failed')
  })
})

describe('hosted page: wallets, card scheme, QR and bank transfer', () => {
  it.each([
    ['wallet_a', 'Approve the payment in your wallet'],
    ['wallet_b', 'Approve the payment in your wallet'],
    ['wallet_c', 'Approve the payment in your wallet'],
    ['wallet_d', 'Approve the payment in your wallet'],
    ['wallet_e', 'Approve the payment in your wallet'],
    ['cardscheme_a', 'Approve the card-scheme payment'],
  ])('%s: approve leads to redirect.success and a succeeded charge', async (type, title) => {
    const h = await pending({ type, redirect: REDIRECT })
    await openPage(h, title)
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.success)
    expect(await charge(h.charge.id)).toMatchObject({ status: 'succeeded', authorized: true, captured: true })
  })

  it.each([
    ['wallet_c', 'Approve the payment in your wallet'],
    ['cardscheme_a', 'Approve the card-scheme payment'],
    ['transfer_a', 'Log in to your bank'],
  ])('%s: decline leads to redirect.fail and a failed charge', async (type, title) => {
    const h = await pending({ type, redirect: REDIRECT })
    await openPage(h, title)
    const res = await submit(h.action, { token: h.token, decision: 'decline' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.fail)
    const after = await charge(h.charge.id)
    expect(after).toMatchObject({ status: 'failed', authorized: false, captured: false })
    expect(after.failure_data.code).toBe('payment_declined')
    expect(after.source.action).toBeUndefined()
    // a bank login declined links no account
    expect(after.source.bank_account).toBeUndefined()
  })

  it('QR: the page shows the code; approve and decline each reach their address', async () => {
    const h = await pending({ type: 'qr_a', redirect: REDIRECT })
    const page = await openPage(h, 'Scan to pay')
    expect(page.text).toContain(`JACKDAW-QR:${h.charge.id}`)
    const res = await submit(h.action, { token: h.token, decision: 'decline' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.fail)
    expect((await charge(h.charge.id)).status).toBe('failed')

    const h2 = await pending({ type: 'qr_a', redirect: REDIRECT })
    const res2 = await submit(h2.action, { token: h2.token, decision: 'approve' })
    expect(res2.headers.location).toBe(REDIRECT.success)
    expect((await charge(h2.charge.id)).status).toBe('succeeded')
  })

  it('transfer_a: the bank login links the account on approval', async () => {
    const h = await pending({ type: 'transfer_a', redirect: REDIRECT, owner: { name: 'Ann Lee' } })
    await openPage(h, 'Log in to your bank')
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.success)
    const after = await charge(h.charge.id)
    expect(after.status).toBe('succeeded')
    expect(after.source.bank_account).toMatchObject({ bank_type: 'transfer_a', account_name: 'Ann Lee' })
  })

  it('redirect addresses with a query string are kept exactly', async () => {
    const redirect = { success: 'https://shop.example/ok?order=7&x=%2F', fail: 'https://shop.example/fail?order=7' }
    const h = await pending({ type: 'wallet_a', redirect })
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.headers.location).toBe(redirect.success)
  })

  it('the amount is shown in the units of its currency', async () => {
    const jpy = await pending({ type: 'wallet_a', redirect: REDIRECT }, { amount: 1500, currency: 'JPY' })
    expect((await t.anon.get(jpy.page)).text).toContain('¥1,500')
    const eur = await pending({ type: 'wallet_a', redirect: REDIRECT }, { amount: 123456, currency: 'eur' })
    expect((await t.anon.get(eur.page)).text).toContain('€1,234.56')
    // ISO 4217's minor unit, where the runtime's Intl shows whole forints and dinars
    const huf = await pending({ type: 'wallet_a', redirect: REDIRECT }, { amount: 150050, currency: 'huf' })
    expect((await t.anon.get(huf.page)).text).toMatch(/HUF\s1,500\.50/)
    const iqd = await pending({ type: 'wallet_a', redirect: REDIRECT }, { amount: 1234567, currency: 'iqd' })
    expect((await t.anon.get(iqd.page)).text).toMatch(/IQD\s1,234\.567/)
    const kwd = await pending({ type: 'wallet_a', redirect: REDIRECT }, { amount: 99_999_999_999, currency: 'kwd' })
    expect((await t.anon.get(kwd.page)).text).toMatch(/KWD\s99,999,999\.999/)
  })
})

describe('hosted page: what it shows', () => {
  it('escapes what it prints and never shows the card number', async () => {
    const acct = await t.app.services.accounts.create(`<script>alert("x")</script> & Sons' "Shop"`)
    const sk = client(t.app, acct.sk_test_key)
    const number = '4000000000003220'
    const h = await pending({ ...cardSource({ number, name: "O'Brien" }), redirect: REDIRECT }, {}, sk)
    const res = await t.anon.get(h.page)
    expectHtml(res, 200)
    expect(res.text).not.toContain('<script')
    expect(res.text).not.toContain('alert("x")')
    // who is paid, as the statement will say: the descriptor made of the account's name
    expect(res.text).toContain('<p>script alert x script Sons&#39; Shop</p>')
    expect(res.text).not.toContain(number)
    expect(res.text).not.toMatch(/4000\s?0000\s?0000\s?3220/)
    const after = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(after.headers.location).toBe(REDIRECT.success)
    expect((await charge(h.charge.id, sk)).status).toBe('succeeded')
  })

  it("names who is paid as the charge's statement descriptor does; a live page carries no test badge", async () => {
    const h = await pending({ type: 'qr_a', redirect: REDIRECT }, { statement_descriptor: "O'Hara #7 Books" })
    const res = await t.anon.get(h.page)
    expect(res.text).toContain('<p>O&#39;Hara #7 Books</p>')
    expect(res.text).toContain('TEST MODE')
    const live = await testApp({ liveProcessor: new Simulator() })
    try {
      const lh = await pending({ type: 'qr_a', redirect: REDIRECT }, {}, live.skLive)
      const page = await live.anon.get(lh.page)
      expectHtml(page, 200)
      expect(page.text).not.toContain('TEST MODE')
      expect(page.text).not.toContain('class="test"')
    } finally {
      await live.close()
    }
  })

  it("asked for with a trailing slash, posts its form to the charge's own address", async () => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    const page = await t.anon.get(h.page.replace('?', '/?'))
    expectHtml(page, 200)
    const action = /<form method="post" action="([^"]+)">/.exec(page.text)?.[1] as string
    const posted = new URL(action, `https://pay.example${h.page.replace('?', '/?')}`).pathname
    expect(posted).toBe(h.action)
    expect((await submit(posted, { token: h.token, decision: 'approve' })).headers.location).toBe(REDIRECT.success)
  })

  it('the page needs no API key, and an API key does not open it without the token', async () => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    expectHtml(await t.anon.get(h.page), 200)
    expectHtml(await t.sk.get(h.action), 404)
  })
})
