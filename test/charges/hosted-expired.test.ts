import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cardSource, REDIRECT, type TestApp, testApp } from '../helpers/app.js'
import { expectHtml, hostedSteps, threeDs } from './hosted-harness.js'

/**
 * A payer who comes back to the hosted page after their time to answer has run out: between the
 * timeout and the recovery sweep that fails the charge, as after it, the page offers no step and
 * its form sends the payer back to the shop as a failed payment. This app runs no sweep of its
 * own, so that the test says when the sweep runs.
 */

const PAYER_TIMEOUT_MS = 60_000

let t: TestApp
beforeAll(async () => {
  t = await testApp({ payerTimeoutMs: PAYER_TIMEOUT_MS })
})
afterAll(() => t.close())

const { pending, submit, charge, openPage } = hostedSteps(() => t)

const timeRunsOut = async () =>
  expect((await t.sk.post('/v2/test/clock/advance', { seconds: PAYER_TIMEOUT_MS / 1000 + 1 })).status).toBe(200)
const sweep = () => t.app.services.charges.expireAbandoned(PAYER_TIMEOUT_MS)

describe("hosted page: the payer's time has run out", () => {
  it('before the sweep: the page offers no step, and either answer goes to redirect.fail', async () => {
    const h = await pending(threeDs())
    await openPage(h, '3-D Secure authentication')
    await timeRunsOut()

    const page = await t.anon.get(h.page)
    expectHtml(page, 200)
    expect(page.text).toContain('Payment failed')
    expect(page.text).toContain('The time to answer this payment has run out.')
    expect(page.text).not.toContain('<form')
    for (const decision of ['approve', 'decline']) {
      const res = await submit(h.action, { token: h.token, decision })
      expect(res.status, res.text).toBe(303)
      expect(res.headers.location).toBe(REDIRECT.fail)
    }
    // the answer came too late: it changed nothing, and the sweep fails the charge as usual
    expect((await charge(h.charge.id)).status).toBe('pending')
    await sweep()
    expect(await charge(h.charge.id)).toMatchObject({ status: 'failed', failure_data: { code: 'payment_expired' } })
  })

  it('after the sweep: the page shows the failure, and the form goes to redirect.fail all the same', async () => {
    const h = await pending({ type: 'wallet_a', redirect: REDIRECT })
    await timeRunsOut()
    await sweep()
    const page = await t.anon.get(h.page)
    expectHtml(page, 200)
    expect(page.text).toContain('Payment failed')
    expect(page.text).not.toContain('<form')
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(REDIRECT.fail)
  })

  it("without a source redirect: the payer goes to the charge's redirect_url, told it failed", async () => {
    const h = await pending(cardSource({ number: '4000000000003220' }), {
      redirect_url: 'https://shop.example/return?order=7',
    })
    await timeRunsOut()
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.status).toBe(303)
    expect(res.headers.location).toBe(`https://shop.example/return?order=7&charge=${h.charge.id}&status=failed`)
  })

  it('with no address to return to: a page that says the payment failed, not an error', async () => {
    const h = await pending(cardSource({ number: '4000000000003220' }))
    await timeRunsOut()
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expectHtml(res, 200)
    expect(res.headers.location).toBeUndefined()
    expect(res.text).toContain('Payment failed')
    expect(res.text).not.toContain('<form')
  })

  it('a payer who answers in time is not affected by the timeout of another charge', async () => {
    const late = await pending(threeDs())
    await timeRunsOut()
    const h = await pending(threeDs())
    await openPage(h, '3-D Secure authentication')
    expect((await submit(late.action, { token: late.token, decision: 'approve' })).headers.location).toBe(REDIRECT.fail)
    const res = await submit(h.action, { token: h.token, decision: 'approve' })
    expect(res.headers.location).toBe(REDIRECT.success)
    expect((await charge(h.charge.id)).status).toBe('succeeded')
  })
})
