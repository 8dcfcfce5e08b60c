/// <reference lib="dom" />
// functions passed to page.evaluate run in the page, with its globals
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type JackdawClient } from '../../src/client/api.js'
import { TEST_CARD } from '../helpers/app.js'
import { type ListeningApp, listeningApp, recorder } from '../helpers/listening.js'
import { consoleErrors, launch, screenshot } from './browser.js'

/**
 * The dashboard in headless Chromium against the service on a real port: sign in with a secret
 * key kept in the tab only, find a charge by status and by id, refund it and see the refund and
 * its event, redeliver a failed notify call; the mode is always shown; the page runs under its
 * CSP with no violation.
 */

let t: ListeningApp
let receiver: Awaited<ReturnType<typeof recorder>>
let browser: Browser
let jackdaw: JackdawClient
let failNotify = true
let refundable: string
let failedCharge: string

beforeAll(async () => {
  ;[t, receiver, browser] = await Promise.all([
    // a payer timeout of an hour, swept every minute: only a moved test clock makes a charge expire in time
    listeningApp(
      {},
      {
        notify: { schedule: [], timeoutMs: 2000, pollMs: 50 },
        recovery: { intervalMs: 60_000, graceMs: 30_000, payerTimeoutMs: 3_600_000 },
      },
    ),
    recorder(() => (failNotify ? 503 : 200)),
    launch(),
  ])
  jackdaw = createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url })
  const redirect = { success: `${receiver.url}/ok`, fail: `${receiver.url}/fail`, notify: `${receiver.url}/hook` }
  const card = (number: string, withNotify = false) =>
    jackdaw.sources.create({ type: 'card', card: { ...TEST_CARD, number }, ...(withNotify ? { redirect } : {}) })
  for (const [i, currency] of ['usd', 'eur', 'gbp'].entries()) {
    await jackdaw.charges.create({ amount: 1999 + i * 1000, currency, source: (await card('5555555555554444')).id })
  }
  failedCharge = (
    await jackdaw.charges.create({ amount: 1200, currency: 'usd', source: (await card('4000000000000002')).id })
  ).id
  await jackdaw.charges.create({
    amount: 50_000,
    currency: 'jpy',
    source: (await card('4242424242424242')).id,
    capture: false,
  })
  refundable = (
    await jackdaw.charges.create({
      amount: 2500,
      currency: 'usd',
      source: (await card('4242424242424242', true)).id,
      description: 'Order 1042',
    })
  ).id
  const customer = await jackdaw.customers.create({ email: 'ann.lee@example.com', description: 'Ann Lee' })
  await jackdaw.customers.attachSource(customer.id as string, { source: (await card('4242424242424242')).id })
  await jackdaw.customers.create({ email: 'bo.chen@example.com', description: 'Bo Chen' })
})
afterAll(async () => {
  await browser?.close()
  await t?.close()
  await receiver?.close()
})

/** Each step of a sign-in within its own time, so that a slow one says which it was and what the page saw. */
async function signedIn(key: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  const errors = consoleErrors(page)
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run()
    } catch (err) {
      const seen = await page
        .locator('body')
        .textContent({ timeout: 1_000 })
        .catch(() => '')
      throw new Error(`sign-in, ${name}: ${(err as Error).message}\npage: ${seen}\n${errors.join('\n')}`)
    }
  }
  const res = await step('opening the dashboard', () => page.goto(`${t.url}/dashboard`, { timeout: 15_000 }))
  expect(res?.status()).toBe(200)
  await step('entering the key', () => page.getByLabel('Secret key').fill(key, { timeout: 15_000 }))
  await screenshot(page, 'dashboard-sign-in')
  await step('signing in', () => page.getByRole('button', { name: 'Sign in' }).click({ timeout: 15_000 }))
  await step('waiting for the mode', () => page.getByTestId('mode').waitFor({ timeout: 15_000 }))
  return { page, errors }
}

// a real browser on a busy two-core machine: a test that fails is run once more, and must then pass
describe('the dashboard', { retry: 1, timeout: 60_000 }, () => {
  it('is served with the CSP of the hosted pages, scripts from its own origin only', async () => {
    const res = await fetch(`${t.url}/dashboard`)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const html = await res.text()
    expect(html).toContain('<script type="module" src="/dashboard/app.js"></script>')
    expect(html).not.toMatch(/<script>|<style>/)
    const js = await fetch(`${t.url}/dashboard/app.js`)
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/)
  })

  it('refuses a wrong key, and signs in with a secret key kept in the tab only', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${t.url}/dashboard`)
    await page.getByLabel('Secret key').fill('sk_test_000000000000000000000000')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Invalid API key/)
    await page.getByLabel('Secret key').fill(t.account.sk_test_key)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect(page.getByTestId('mode').textContent()).resolves.toBe('Test mode')
    expect(page.url()).not.toContain(t.account.sk_test_key)
    expect(await context.cookies()).toEqual([])
    expect(await page.evaluate(() => localStorage.length)).toBe(0)
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([t.account.sk_test_key])
    // a reload in the same tab stays signed in; a new tab starts signed out
    await page.reload()
    await page.getByTestId('mode').waitFor()
    const other = await context.newPage()
    await other.goto(`${t.url}/dashboard`)
    await other.getByLabel('Secret key').waitFor()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Secret key').waitFor()
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await context.close()
  })

  it('lists charges with amounts in their currency units, filters by status, pages, and finds one by id', async () => {
    const { page, errors } = await signedIn(t.account.sk_test_key)
    const rows = page.locator('tbody tr')
    // the list, or the alert that says why it is not there
    await page
      .locator('tbody tr, [role=alert]')
      .first()
      .waitFor({ timeout: 20_000 })
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\n${(await page.locator('main').textContent()) ?? ''}\n${errors.join('\n')}`)
      })
    expect(await page.locator('[role=alert]').count(), `${await page.content()}\n${errors.join('\n')}`).toBe(0)
    expect(await rows.count()).toBe(6)
    const amounts = await page.locator('tbody .money').allTextContents()
    expect(amounts).toEqual(['$25.00', '¥50,000', '$12.00', '£39.99', '€29.99', '$19.99'])
    await screenshot(page, 'dashboard-charges')

    await page.getByRole('link', { name: 'failed', exact: true }).click()
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1)
    expect(await page.locator('tbody .id').allTextContents()).toEqual([failedCharge])

    // pages as the API does: four at a time would take two pages; here through start_after
    await page.getByRole('link', { name: 'All', exact: true }).click()
    // the filtered page stays up until the whole list has loaded
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 6)
    const firstIds = await page.locator('tbody .id').allTextContents()
    await page.evaluate((after) => {
      location.hash = `#/charges?start_after=${after}`
    }, firstIds[3] as string)
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2)
    expect(await page.locator('tbody .id').allTextContents()).toEqual(firstIds.slice(4))
    await page.getByRole('link', { name: 'First page' }).waitFor()

    await page.getByLabel('Charge id').fill(refundable)
    await page.getByRole('button', { name: 'Find' }).click()
    await page.getByRole('heading', { name: /\$25\.00/ }).waitFor()
    expect(page.url()).toContain(`#/charges/${refundable}`)
    expect(errors).toEqual([])
  })

  it('refunds a charge and shows the refund and its event in the history; redelivers a failed notify call', async () => {
    const { page, errors } = await signedIn(t.account.sk_test_key)
    await page.goto(`${t.url}/dashboard#/charges/${refundable}`)
    await page.getByRole('heading', { name: /\$25\.00/ }).waitFor()
    // the notify call of charge.succeeded fails once (503) and, with no schedule, is failed
    await page.waitForFunction(
      async (id) => {
        const key = sessionStorage.getItem('jackdaw.dashboard.key')
        const res = await fetch(`/v2/deliveries/?charge=${id}`, { headers: { authorization: `Bearer ${key}` } })
        return ((await res.json()) as { data: { status: string }[] }).data[0]?.status === 'failed'
      },
      refundable,
      { polling: 100, timeout: 10_000 },
    )
    await page.reload()
    await page.getByRole('heading', { name: /\$25\.00/ }).waitFor()

    await page.locator('input[name=refund-amount]').fill('10')
    await page.locator('input[name=refund-reason]').fill('requested_by_customer')
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    await expect(page.getByTestId('confirm-question').textContent()).resolves.toBe(
      'Refund $10.00 of the $25.00 left? This cannot be undone.',
    )
    await page.getByRole('button', { name: 'Yes, refund' }).click()
    await page.getByText('Event charge.refunded').waitFor()
    const history = await page.locator('.timeline li').allTextContents()
    expect(history.some((h) => /Refund re_\w+ of \$10\.00 succeeded/.test(h))).toBe(true)
    const order = ['Charge created', 'Event charge.succeeded', 'Refund re_', 'Event charge.refunded']
    const at = order.map((o) => history.findIndex((h) => h.includes(o)))
    expect(at.every((i) => i >= 0)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
    expect(history.some((h) => /Notify attempt 1 of dlv_\w+: HTTP 503/.test(h))).toBe(true)
    const read = await jackdaw.charges.retrieve(refundable)
    expect(read).toMatchObject({ amount_refunded: 1000, status: 'succeeded' })
    expect(read.refunds[0]).toMatchObject({ amount: 1000, reason: 'requested_by_customer' })
    await screenshot(page, 'dashboard-charge')

    failNotify = false
    const failed = (await jackdaw.deliveries.list({ charge: refundable })).data.find((d) => d.status === 'failed')
    await page.getByRole('link', { name: 'Notify calls' }).click()
    const card = page.locator('article.delivery', { hasText: failed?.id as string })
    await card.getByRole('button', { name: 'Redeliver' }).click()
    await card.locator('.status-pending, .status-delivered').first().waitFor()
    const delivered = await (async () => {
      for (let i = 0; i < 100; i++) {
        const d = await jackdaw.deliveries.retrieve(failed?.id as string)
        if (d.status === 'delivered') return d
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error('not delivered')
    })()
    expect(delivered.attempts.map((a) => a.status_code)).toEqual([503, 200])
    await page.reload()
    await card.locator('.status-delivered').waitFor()
    await screenshot(page, 'dashboard-notify-calls')
    expect(errors).toEqual([])
  })

  it('shows customers with their sources, and events linking to their charges', async () => {
    const { page } = await signedIn(t.account.sk_test_key)
    await page.getByRole('link', { name: 'Customers' }).click()
    const ann = page.locator('tr', { hasText: 'ann.lee@example.com' })
    await expect(ann.textContent()).resolves.toMatch(/visa •••• 4242/)
    await screenshot(page, 'dashboard-customers')
    await page.getByRole('link', { name: 'Events' }).click()
    await page.locator('tbody tr').first().waitFor()
    await page.locator('tbody tr', { hasText: failedCharge }).getByRole('link').click()
    await page.getByRole('heading', { name: /\$12\.00/ }).waitFor()
    await expect(page.locator('.facts').textContent()).resolves.toMatch(/card_declined/)
  })

  it('moves the test clock past the payer timeout: a charge whose payer never answered shows failed, payment_expired', async () => {
    const source = await jackdaw.sources.create({ type: 'card', card: { ...TEST_CARD, number: '4000000000003220' } })
    const waiting = await jackdaw.charges.create({ amount: 3100, currency: 'usd', source: source.id })
    expect(waiting.status).toBe('pending')
    const { page, errors } = await signedIn(t.account.sk_test_key)
    await page.getByRole('link', { name: 'Test clock' }).click()
    await expect(page.getByTestId('clock-offset').textContent()).resolves.toMatch(/\(0 s\)/)

    await page.locator('input[name=advance-amount]').fill('2')
    await page.getByLabel('Unit').selectOption('hours')
    await page.getByRole('button', { name: 'Advance' }).click()
    await page.getByTestId('clock-advanced').waitFor()
    // the clock shown is read again after the advance
    await page.getByTestId('clock-offset').filter({ hasText: '(7200 s)' }).waitFor()
    await expect(page.getByTestId('clock-offset').textContent()).resolves.toMatch(/2 h 0 min 0 s \(7200 s\)/)
    expect((await jackdaw.testClock.retrieve()).offset_seconds).toBe(7200)
    await screenshot(page, 'dashboard-test-clock')
    // a fraction of a unit moves it that many seconds; less than a second is refused, and the
    // last move is no longer shown beside the refusal
    await page.locator('input[name=advance-amount]').fill('0.5')
    await page.getByRole('button', { name: 'Advance' }).click()
    await page.getByTestId('clock-offset').filter({ hasText: '(9000 s)' }).waitFor()
    await page.locator('input[name=advance-amount]').fill('0.0001')
    await page.getByRole('button', { name: 'Advance' }).click()
    await page.getByRole('alert').filter({ hasText: 'at least a second' }).waitFor()
    expect(await page.getByTestId('clock-advanced').count()).toBe(0)
    expect((await jackdaw.testClock.retrieve()).offset_seconds).toBe(9000)

    await page.goto(`${t.url}/dashboard#/charges/${waiting.id}`)
    const facts = page.locator('.facts')
    for (let i = 0; i < 50 && !/payment_expired/.test((await facts.textContent()) ?? ''); i++) {
      await new Promise((r) => setTimeout(r, 100))
      await page.reload()
      await facts.waitFor()
    }
    await expect(facts.textContent()).resolves.toMatch(/payment_expired: The payer did not complete the payment/)
    await page.getByRole('heading', { name: /\$31\.00 failed/ }).waitFor()
    expect(await jackdaw.charges.retrieve(waiting.id)).toMatchObject({
      status: 'failed',
      failure_data: { code: 'payment_expired' },
    })
    expect(errors).toEqual([])
  })

  it('runs a scenario with its overrides, shows what it made and links to its charge', async () => {
    const { page, errors } = await signedIn(t.account.sk_test_key)
    await page.getByRole('link', { name: 'Scenarios' }).click()
    await page.locator('select[name=scenario]').selectOption('charge.failed')
    await page.locator('input[name=override-decline_code]').fill('bad_luck')
    await page.getByRole('button', { name: 'Run' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/decline_code must be one of/)

    await page.locator('input[name=override-amount]').fill('4200')
    await page.locator('input[name=override-decline_code]').fill('insufficient_funds')
    await page.locator('input[name=override-metadata]').fill('order=B-2, channel=dashboard')
    await page.getByRole('button', { name: 'Run' }).click()
    const made = page.getByTestId('scenario-made')
    await made.waitFor()
    await expect(made.textContent()).resolves.toMatch(/failed insufficient_funds/)
    await screenshot(page, 'dashboard-scenarios')
    const chargeId = (await made.locator('a .id').textContent()) as string
    expect(await jackdaw.charges.retrieve(chargeId)).toMatchObject({
      amount: 4200,
      status: 'failed',
      metadata: { order: 'B-2', channel: 'dashboard' },
      failure_data: { code: 'insufficient_funds' },
    })
    await made.getByRole('link').click()
    await page.getByRole('heading', { name: /\$42\.00/ }).waitFor()
    await expect(page.locator('.facts').textContent()).resolves.toMatch(/insufficient_funds/)
    // the refused run's answer is the one the console reports
    expect(errors).toEqual([expect.stringMatching(/status of 422/)])
  })

  it('with a live key shows live mode and live objects only, and no test clock or scenarios', async () => {
    const { page } = await signedIn(t.account.sk_live_key)
    await expect(page.getByTestId('mode').textContent()).resolves.toBe('Live mode')
    await page.getByText('No charges.').waitFor()
    expect(await page.getByRole('link', { name: 'Test clock' }).count()).toBe(0)
    expect(await page.getByRole('link', { name: 'Scenarios' }).count()).toBe(0)
    await page.evaluate(() => {
      location.hash = '#/clock'
    })
    await page.getByText('in test mode only').waitFor()
  })
})
