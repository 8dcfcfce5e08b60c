import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CreateSourceParams, createClient } from '../../src/client/api.js'
import { TEST_CARD } from '../helpers/app.js'
import { type ListeningApp, listeningApp, recorder } from '../helpers/listening.js'
import { consoleErrors, launch, screenshot } from './browser.js'

/**
 * Each kind of hosted payer page in headless Chromium: the browser opens `action.url`, presses
 * approve or decline, and lands on the source's redirect.success or redirect.fail (a local
 * server records it); the charge reads as the answer says; a second answer, from a copy of the
 * page opened before the first, is refused.
 */

let t: ListeningApp
let shop: Awaited<ReturnType<typeof recorder>>
let browser: Browser
beforeAll(async () => {
  ;[t, shop, browser] = await Promise.all([listeningApp(), recorder(), launch()])
})
afterAll(async () => {
  await browser?.close()
  await t?.close()
  await shop?.close()
})

const KINDS = [
  {
    kind: '3-D Secure',
    source: { type: 'card', card: { ...TEST_CARD, number: '4000000000003220' } },
    title: /3-D Secure/,
    declined: 'authentication_failed',
  },
  { kind: 'wallet', source: { type: 'wallet_a' }, title: /wallet/, declined: 'payment_declined' },
  { kind: 'card scheme', source: { type: 'cardscheme_a' }, title: /card-scheme/, declined: 'payment_declined' },
  { kind: 'QR', source: { type: 'qr_a' }, title: /Scan to pay/, declined: 'payment_declined' },
  {
    kind: 'bank transfer',
    source: { type: 'transfer_a', owner: { name: 'Ann Lee' } },
    title: /Log in to your bank/,
    declined: 'payment_declined',
  },
] as const

let n = 0
async function pendingCharge(source: object) {
  const tag = `${++n}`
  const redirect = { success: `${shop.url}/ok/${tag}`, fail: `${shop.url}/fail/${tag}` }
  // over the real port, so that action.url names the address the browser reaches
  const jackdaw = createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url })
  const src = await jackdaw.sources.create({ ...source, redirect } as CreateSourceParams)
  const ch = await jackdaw.charges.create({ amount: 4200, currency: 'usd', source: src.id })
  expect(ch.status).toBe('pending')
  expect(ch.source.action?.type).toBe('redirect_to_url')
  return { id: ch.id, url: ch.source.action?.url as string, tag }
}

describe.each(KINDS)('the $kind page', ({ kind, source, title, declined }) => {
  for (const decision of ['approve', 'decline'] as const) {
    it(`${decision}: lands on the shop's ${decision === 'approve' ? 'success' : 'fail'} address, the charge reads so, and a second answer goes there too, changing nothing`, async () => {
      const charge = await pendingCharge(source)
      const context = await browser.newContext()
      const page = await context.newPage()
      const errors = consoleErrors(page)
      const opened = await page.goto(charge.url)
      expect(opened?.status()).toBe(200)
      expect(opened?.headers()['content-security-policy']).toContain("default-src 'none'")
      await expect(page.title()).resolves.toMatch(title)
      expect(await page.textContent('.amount')).toBe('$42.00')
      if (decision === 'approve') await screenshot(page, `hosted-${kind.replace(/\W+/g, '-').toLowerCase()}`)
      // a second copy of the page, as a payer who opened the link twice would have
      const second = await context.newPage()
      await second.goto(charge.url)

      await page.getByRole('button', { name: decision === 'approve' ? 'Approve' : 'Decline' }).click()
      const landing = `${shop.url}/${decision === 'approve' ? 'ok' : 'fail'}/${charge.tag}`
      await page.waitForURL(landing)
      const hit = await shop.waitFor((r) => r.url.endsWith(`/${charge.tag}`))
      expect(`${shop.url}${hit.url}`).toBe(landing)
      expect(hit.method).toBe('GET')

      const read = (await t.sk.get(`/v2/charges/${charge.id}`)).body
      if (decision === 'approve') expect(read).toMatchObject({ status: 'succeeded', authorized: true })
      else expect(read).toMatchObject({ status: 'failed', failure_data: { code: declined } })
      if (kind === 'bank transfer' && decision === 'approve') expect(read.source.bank_account).toBeDefined()

      // the payer who answers the stale copy returns to the shop where the charge ended
      await second.getByRole('button', { name: 'Approve' }).click()
      await second.waitForURL(landing)
      // the charge is as the first answer left it
      expect((await t.sk.get(`/v2/charges/${charge.id}`)).body).toEqual(read)
      expect(shop.received.filter((r) => r.url.endsWith(`/${charge.tag}`)).map((r) => r.url)).toEqual([
        hit.url,
        hit.url,
      ])
      // reopened, the page shows the outcome and offers no answer
      await page.goto(charge.url)
      await expect(page.textContent('h1')).resolves.toBe(`Payment ${read.status}`)
      expect(await page.locator('button').count()).toBe(0)
      expect(errors).toEqual([])
      await context.close()
    })
  }
})
