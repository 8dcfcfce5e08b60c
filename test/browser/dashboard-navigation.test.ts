/// <reference lib="dom" />
// functions passed to page.evaluate run in the page, with its globals
import type { Browser, Page, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type JackdawClient } from '../../src/client/api.js'
import { TEST_CARD } from '../helpers/app.js'
import { type ListeningApp, listeningApp } from '../helpers/listening.js'
import { consoleErrors, launch } from './browser.js'

/**
 * Going from one object to another in the same tab (a pasted address, Back/Forward, a search):
 * nothing shown, typed or asked on the first is left on the second, and no address leaves the
 * dashboard blank.
 */

let t: ListeningApp
let browser: Browser
let jackdaw: JackdawClient
beforeAll(async () => {
  ;[t, browser] = await Promise.all([listeningApp(), launch()])
  jackdaw = createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url })
})
afterAll(async () => {
  await browser?.close()
  await t?.close()
})

async function signedIn(): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  const errors = consoleErrors(page)
  await page.goto(`${t.url}/dashboard`, { timeout: 15_000 })
  await page.getByLabel('Secret key').fill(t.account.sk_test_key, { timeout: 15_000 })
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByTestId('mode').waitFor({ timeout: 15_000 })
  return { page, errors }
}

async function charge(amount: number, description: string) {
  const source = await jackdaw.sources.create({ type: 'card', card: TEST_CARD })
  return (await jackdaw.charges.create({ amount, currency: 'usd', source: source.id, description })).id
}

const go = (page: Page, hash: string) =>
  page.evaluate((h) => {
    location.hash = h
  }, hash)

/** Holds the page's API calls whose address matches `url` until `release`. */
async function hold(page: Page, url: string | RegExp) {
  const held: Route[] = []
  let waiting = true
  await page.route(url, (route) => {
    if (waiting) held.push(route)
    else void route.continue()
  })
  return {
    release: async () => {
      // the view was waiting on a request held here, not on one that passed by
      expect(held.length, `a request to ${url} was held`).toBeGreaterThan(0)
      waiting = false
      await Promise.all(held.splice(0).map((r) => r.continue()))
    },
  }
}

// a real browser on a busy two-core machine: a test that fails is run once more, and must then pass
describe('the dashboard, going from one object to another', { retry: 1, timeout: 60_000 }, () => {
  it('drops a question asked on one charge when another is opened: "Yes" never acts on the first', async () => {
    const first = await charge(2500, 'Order first')
    const second = await charge(9900, 'Order second')
    const { page, errors } = await signedIn()
    await go(page, `#/charges/${first}`)
    await page.getByText('Order first').waitFor()
    await page.locator('input[name=refund-amount]').fill('5')
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    const question = page.getByTestId('confirm-question')
    await expect(question.textContent()).resolves.toBe('Refund $5.00 of the $25.00 left? This cannot be undone.')

    // the second charge's address, pasted; its data held back for a moment
    const loading = await hold(page, `**/v2/charges/${second}`)
    await go(page, `#/charges/${second}`)
    await page.getByText('Loading…').waitFor({ timeout: 5_000 })
    const between = (await page.locator('main').textContent()) ?? ''
    expect(between).not.toContain('Order first')
    expect(await page.locator('main button').count()).toBe(0)
    await loading.release()

    await page.getByText('Order second').waitFor()
    expect(await question.count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Yes, refund' }).count()).toBe(0)
    // nor is the amount typed on the first charge carried to the second's form
    expect(await page.locator('input[name=refund-amount]').inputValue()).toBe('')
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    await expect(question.textContent()).resolves.toBe('Refund $99.00 (all that is left)? This cannot be undone.')
    await page.getByRole('button', { name: 'Yes, refund' }).click()
    await page.getByRole('heading', { name: /refunded/ }).waitFor()
    expect((await jackdaw.charges.retrieve(second)).amount_refunded).toBe(9900)
    expect((await jackdaw.charges.retrieve(first)).amount_refunded).toBe(0)

    // Back to the first charge: asked about nothing, refunded nothing
    await page.goBack()
    await page.getByText('Order first').waitFor()
    expect(await question.count()).toBe(0)
    expect((await jackdaw.charges.retrieve(first)).amount_refunded).toBe(0)
    expect(errors).toEqual([])
  })

  it('shows a list as loading, not the rows of the filter before, until the new one has come', async () => {
    await charge(1234, 'Listed')
    const { page, errors } = await signedIn()
    await page.locator('tbody tr').first().waitFor()
    const loading = await hold(page, /\/v2\/charges\/?\?.*status=failed/)
    await page.getByRole('link', { name: 'failed', exact: true }).click()
    await page.getByText('Loading…').waitFor({ timeout: 5_000 })
    expect(await page.locator('tbody tr').count()).toBe(0)
    await loading.release()
    await page.getByText('No charges in status failed.').waitFor()
    expect(errors).toEqual([])
  })

  it('finds no charge by an id with a % in it, says so, and keeps working after a reload', async () => {
    const { page, errors } = await signedIn()
    await page.getByLabel('Charge id').fill('ch_50%off')
    await page.getByRole('button', { name: 'Find' }).click()
    const missing = page.getByRole('alert')
    await expect(missing.textContent({ timeout: 5_000 })).resolves.toBe(
      "No such charge: 'ch_50%off' (resource_missing)",
    )
    expect(page.url()).toMatch(/#\/charges\/ch_50%25off$/)
    await page.reload()
    await page.getByTestId('mode').waitFor({ timeout: 15_000 })
    await expect(missing.textContent({ timeout: 5_000 })).resolves.toBe(
      "No such charge: 'ch_50%off' (resource_missing)",
    )

    // an address with a broken escape, typed or pasted: read as it is written
    await go(page, '#/charges/ch_%E0%A4%A')
    await expect(missing.textContent({ timeout: 5_000 })).resolves.toBe(
      "No such charge: 'ch_%E0%A4%A' (resource_missing)",
    )
    await go(page, '#/nonsense%zz')
    await page.getByRole('heading', { name: 'Not found' }).waitFor({ timeout: 5_000 })
    await page.reload()
    await page.getByRole('heading', { name: 'Not found' }).waitFor({ timeout: 15_000 })
    await page.getByRole('link', { name: 'Back to charges' }).click()
    await page.getByRole('heading', { name: 'Charges' }).waitFor()
    // the browser reports each charge not found (HTTP 404) as an error of its own: nothing else
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([])
  })
})

describe("a charge's history", () => {
  it('shows every event of a charge with more than a page of them, its first ones too', async () => {
    const id = await charge(10_000, 'many refunds')
    for (let i = 0; i < 105; i++) await jackdaw.charges.refund(id, { amount: 1 })
    const events = []
    for await (const e of jackdaw.all(jackdaw.events.list, { charge: id })) events.push(e)
    expect(events.length).toBe(106)
    const { page, errors } = await signedIn()
    await go(page, `#/charges/${id}`)
    await page.locator('ol.timeline').waitFor({ timeout: 15_000 })
    await expect
      .poll(() => page.locator('ol.timeline > li', { hasText: 'Event charge.' }).count(), { timeout: 15_000 })
      .toBe(events.length)
    expect(await page.locator('ol.timeline').textContent()).toContain('charge.succeeded')
    expect(errors).toEqual([])
  })
})
