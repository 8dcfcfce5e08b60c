import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Simulator } from '../../src/processor/simulator.js'
import {
  type Client,
  cardSource,
  client,
  type Json,
  REDIRECT,
  type Reply,
  type TestApp,
  testApp,
} from '../helpers/app.js'

/**
 * The hosted page a payer is sent to by `source.action.url`, driven as a browser would: GET the
 * page, POST its form (application/x-www-form-urlencoded), follow the 303.
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

interface Hosted {
  charge: Json
  /** path and query of the page, as the payer's browser asks for it */
  page: string
  /** where the page's form posts */
  action: string
  token: string
}

async function pending(source: object, extra: object = {}, as: Client = t.sk): Promise<Hosted> {
  const src = await as.post('/v2/sources/', source)
  expect(src.status, JSON.stringify(src.body)).toBe(200)
  const res = await as.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id, ...extra })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  expect(res.body.status).toBe('pending')
  expect(res.body.source.action.type).toBe('redirect_to_url')
  const url = new URL(res.body.source.action.url)
  expect(url.pathname).toBe(`/v2/hosted/charges/${res.body.id}`)
  const token = url.searchParams.get('token') as string
  expect(token).toMatch(/^[0-9a-f]{32,}$/)
  return { charge: res.body, page: url.pathname + url.search, action: url.pathname, token }
}

const submit = (path: string, fields: Record<string, string>) =>
  t.anon.post(path, new URLSearchParams(fields).toString(), FORM)

async function charge(id: string, as: Client = t.sk): Promise<Json> {
  const res = await as.get(`/v2/charges/${id}`)
  expect(res.status).toBe(200)
  return res.body
}

function expectHtml(res: Reply, status: number) {
  expect(res.status, res.text).toBe(status)
  expect(String(res.headers['content-type'])).toBe('text/html; charset=utf-8')
  const csp = String(res.headers['content-security-policy'])
  expect(csp).toContain("default-src 'none'")
  expect(csp).toContain("frame-ancestors 'none'")
  // the page's token is in its address: no Referer carries it on, and no cache keeps the page
  expect(res.headers['referrer-policy']).toBe('no-referrer')
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers['x-content-type-options']).toBe('nosniff')
  expect(res.text).toMatch(/^<!doctype html>/i)
  expect(res.text).toContain('<main class="box">')
}

/** The page a payer sees first: the step's title, the amount, both buttons, the form. */
async function openPage(h: Hosted, title: string): Promise<Reply> {
  const res = await t.anon.get(h.page)
  expectHtml(res, 200)
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.text).toContain(title)
  expect(res.text).toContain('Test account')
  expect(res.text).toContain('$10.00')
  expect(res.text).toContain('TEST MODE')
  // relative to the page, so that it posts under JACKDAW_PUBLIC_URL's path too
  expect(res.text).toContain(`<form method="post" action="${h.charge.id}">`)
  expect(res.text).toContain(`<input type="hidden" name="token" value="${h.token}">`)
  expect(res.text).toContain('value="approve"')
  expect(res.text).toContain('value="decline"')
  return res
}

const threeDs = (number = '4000000000003220') => ({ ...cardSource({ number }), redirect: REDIRECT })

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

  it('wallet: decline leads to redirect.fail and a failed charge', async () => {
    const h = await pending({ type: 'wallet_c', redirect: REDIRECT })
    const res = await submit(h.action, { token: h.token, decision: 'decline' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.fail)
    const after = await charge(h.charge.id)
    expect(after).toMatchObject({ status: 'failed', authorized: false })
    expect(after.failure_data.code).toBe('payment_declined')
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

describe('hosted page: refusals', () => {
  it('a wrong token is a 404 page and leaves the charge unchanged', async () => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    const before = await charge(h.charge.id)
    const wrong = h.token.replace(/^./, (c) => (c === '0' ? '1' : '0'))
    for (const path of [
      `${h.action}?token=${wrong}`,
      `${h.action}?token=`,
      h.action,
      `${h.action}?token=${h.token.slice(0, -1)}`,
    ]) {
      const res = await t.anon.get(path)
      expectHtml(res, 404)
      expect(res.text).toContain('Payment not found')
      expect(res.text).not.toContain('<form')
    }
    for (const token of [wrong, '', h.token.slice(1)]) {
      const res = await submit(h.action, { token, decision: 'approve' })
      expectHtml(res, 404)
      expect(res.headers.location).toBeUndefined()
    }
    const noToken = await submit(h.action, { decision: 'approve' })
    expectHtml(noToken, 404)
    expect(await charge(h.charge.id)).toEqual(before)
  })

  it('a link or form the page cannot read is a 400 page, never JSON, and changes nothing', async () => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    const before = await charge(h.charge.id)
    const twice = await t.anon.get(`${h.action}?token=${h.token}&token=${h.token}`)
    expectHtml(twice, 400)
    expect(twice.text).toContain('This payment link is not valid.')
    expect(twice.text).not.toContain(h.token)
    expectHtml(await submit(h.action, { token: 'x'.repeat(201), decision: 'approve' }), 400)
    expectHtml(await submit(h.action, { token: h.token, decision: 'approve', pad: 'x'.repeat(5000) }), 413)
    expect(await charge(h.charge.id)).toEqual(before)
  })

  it("another charge's token does not open this charge", async () => {
    const a = await pending({ type: 'wallet_a', redirect: REDIRECT })
    const b = await pending({ type: 'wallet_b', redirect: REDIRECT })
    const before = await charge(a.charge.id)
    expectHtml(await t.anon.get(`${a.action}?token=${b.token}`), 404)
    expectHtml(await submit(a.action, { token: b.token, decision: 'approve' }), 404)
    expectHtml(await t.anon.get(`/v2/hosted/charges/ch_00000000000000000000000000000000?token=${a.token}`), 404)
    expect(await charge(a.charge.id)).toEqual(before)
    expect((await charge(b.charge.id)).status).toBe('pending')
  })

  it('a decision other than approve or decline is a 400 page and changes nothing', async () => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    const before = await charge(h.charge.id)
    const forms: Record<string, string>[] = [{ token: h.token, decision: 'yes' }, { token: h.token }]
    for (const fields of forms) {
      const res = await submit(h.action, fields)
      expectHtml(res, 400)
      expect(res.headers.location).toBeUndefined()
    }
    expect(await charge(h.charge.id)).toEqual(before)
  })

  it('after the answer, the page shows the outcome and a second answer goes where the first went', async () => {
    const h = await pending(threeDs())
    const first = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(first.headers.location).toBe(REDIRECT.success)
    const done = await charge(h.charge.id)

    const page = await t.anon.get(h.page)
    expectHtml(page, 200)
    expect(page.text).toContain('Payment succeeded')
    expect(page.text).not.toContain('<form')

    // a page left open, a second tab, a back button: the payer still returns to the shop
    for (const decision of ['approve', 'decline']) {
      const again = await submit(h.action, { token: h.token, decision })
      expect(again.status).toBe(303)
      expect(again.headers.location).toBe(REDIRECT.success)
    }
    expect(await charge(h.charge.id)).toEqual(done)

    // the API's test endpoint refuses in the same way
    const api = await t.sk.post(`/v2/test/charges/${h.charge.id}/authorize`, { decision: 'decline' })
    expect(api.status).toBe(400)
    expect(api.body.error.code).toBe('charge_not_pending')
    expect(await charge(h.charge.id)).toEqual(done)
  })

  it('a charge answered through the API shows its outcome on the page and refuses a form answer', async () => {
    const h = await pending({ type: 'wallet_d', redirect: REDIRECT })
    const api = await t.sk.post(`/v2/test/charges/${h.charge.id}/authorize`, { decision: 'decline' })
    expect(api.body.status).toBe('failed')
    const page = await t.anon.get(h.page)
    expectHtml(page, 200)
    expect(page.text).toContain('Payment failed')
    const again = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(again.status).toBe(303)
    expect(again.headers.location).toBe(REDIRECT.fail)
    expect((await charge(h.charge.id)).status).toBe('failed')
  })

  it('a double submission moves the charge once, and both answers send the payer where the charge ended', async () => {
    for (let round = 0; round < 5; round++) {
      const h = await pending({ type: 'wallet_e', redirect: REDIRECT })
      const answers = await Promise.all([
        submit(h.action, { token: h.token, decision: 'approve' }),
        submit(h.action, { token: h.token, decision: 'approve' }),
        submit(h.action, { token: h.token, decision: 'decline' }),
      ])
      const after = await charge(h.charge.id)
      const to = after.status === 'succeeded' ? REDIRECT.success : REDIRECT.fail
      expect(answers.map((r) => [r.status, r.headers.location])).toEqual(answers.map(() => [303, to]))
      const events = (await t.sk.get(`/v2/events/?charge=${h.charge.id}`)).body.data.map((e: Json) => e.type)
      expect(events.filter((type: string) => type !== 'charge.pending')).toHaveLength(1)
    }
  })
})

describe('hosted page: the service at fault', () => {
  it.each([
    ['the database cannot serve for now', 'disk_full', 503],
    ['a fault of its own', 'raise_exception', 500],
  ])('%s: the payer gets a page saying to try again, no JSON and no internals', async (_what, code, status) => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    await t.db.exec(`
      CREATE FUNCTION refused() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'secret internals' USING ERRCODE = '${code}'; END $$;
      CREATE TRIGGER refused BEFORE UPDATE ON charges FOR EACH ROW EXECUTE FUNCTION refused();`)
    try {
      const res = await submit(h.action, { token: h.token, decision: 'approve' })
      expectHtml(res, status)
      expect(res.text).toContain('Please try again in a moment.')
      expect(res.text).not.toMatch(/secret internals|api_error|internal_error|\{"error"/)
      if (status === 503) expect(res.headers['retry-after']).toBe('1')
      expect(t.logs.join('')).toContain(status === 503 ? 'database unavailable' : 'unhandled error')
    } finally {
      await t.db.exec('DROP TRIGGER refused ON charges; DROP FUNCTION refused()')
    }
    // once the database serves again, the same answer goes through
    const again = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(again.headers.location).toBe(REDIRECT.success)
  })

  it("posts under JACKDAW_PUBLIC_URL's path: the form's address is relative to the page", async () => {
    const behind = await testApp({ publicUrl: 'https://pay.example/checkout' })
    try {
      const src = await behind.sk.post('/v2/sources/', { type: 'wallet_b', redirect: REDIRECT })
      const made = await behind.sk.post('/v2/charges/', { amount: 500, currency: 'usd', source: src.body.id })
      const link = new URL(made.body.source.action.url)
      expect(link.href.startsWith('https://pay.example/checkout/v2/hosted/charges/')).toBe(true)
      const page = await behind.anon.get(link.pathname.replace('/checkout', '') + link.search)
      const action = /<form method="post" action="([^"]+)">/.exec(page.text)?.[1] as string
      expect(new URL(action, link).href).toBe(`https://pay.example/checkout/v2/hosted/charges/${made.body.id}`)
    } finally {
      await behind.close()
    }
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

  it('the page needs no API key, and an API key does not open it without the token', async () => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    expectHtml(await t.anon.get(h.page), 200)
    expectHtml(await t.sk.get(h.action), 404)
  })
})
