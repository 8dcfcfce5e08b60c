import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Json, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { expectHtml, hostedSteps, threeDs } from './hosted-harness.js'

/**
 * The hosted page's refusals: wrong tokens, unreadable forms, answers after the charge is decided,
 * double submissions, and the service's own faults, each a page for the payer that changes nothing
 * (hosted-harness.ts).
 */

let t: TestApp
beforeAll(async () => {
  t = await testApp()
})
afterAll(() => t.close())

const { pending, submit, charge } = hostedSteps(() => t)

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
