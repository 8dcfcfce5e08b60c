/// <reference lib="dom" />
// functions passed to page.evaluate run in the page, with its globals
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type JackdawClient } from '../../src/client/api.js'
import { TEST_CARD } from '../helpers/app.js'
import { type ListeningApp, listeningApp } from '../helpers/listening.js'
import { consoleErrors, launch } from './browser.js'

/**
 * What a usability audit of the dashboard found: real-time and test-clock times told apart, no
 * lease shown as a next attempt, a confirm step before capture, void and refund (and a partial
 * capture), no favicon 404, and a "Not found" view for an unknown address.
 */

/** A notify receiver that answers 200, 503, or holds each call until `release`. */
async function receiver() {
  let mode: 'ok' | 'fail' | 'hold' = 'ok'
  const held: http.ServerResponse[] = []
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (mode === 'hold') held.push(res)
      else res.writeHead(mode === 'ok' ? 200 : 503).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    answer(m: typeof mode) {
      mode = m
      if (m !== 'hold') for (const res of held.splice(0)) res.writeHead(m === 'ok' ? 200 : 503).end()
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

let t: ListeningApp
let hooks: Awaited<ReturnType<typeof receiver>>
let browser: Browser
let jackdaw: JackdawClient

beforeAll(async () => {
  ;[t, hooks, browser] = await Promise.all([
    // a failed call is tried again an hour later, and an attempt may take 30 s: its lease is 90 s
    listeningApp({}, { notify: { schedule: [3600], timeoutMs: 30_000, pollMs: 50 } }),
    receiver(),
    launch(),
  ])
  jackdaw = createClient({ apiKey: t.account.sk_test_key, baseUrl: t.url })
})
afterAll(async () => {
  await browser?.close()
  await t?.close()
  await hooks?.close()
})

async function signedIn(key: string): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  const errors = consoleErrors(page)
  await page.goto(`${t.url}/dashboard`, { timeout: 15_000 })
  await page.getByLabel('Secret key').fill(key, { timeout: 15_000 })
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByTestId('mode').waitFor({ timeout: 15_000 })
  return { page, errors }
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read()
    if (done(v)) return v
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const notified = (client: JackdawClient, amount: number, capture = true) =>
  client.sources
    .create({
      type: 'card',
      card: TEST_CARD,
      redirect: { success: `${hooks.url}/ok`, fail: `${hooks.url}/fail`, notify: `${hooks.url}/hook` },
    })
    .then((s) => client.charges.create({ amount, currency: 'usd', source: s.id, capture }))

const card = () => jackdaw.sources.create({ type: 'card', card: TEST_CARD })

// a real browser on a busy two-core machine: a test that fails is run once more, and must then pass
describe('the dashboard, as the audit found it', { retry: 1, timeout: 60_000 }, () => {
  it('labels real times, and keeps them out of the history sequence, when the test clock runs days ahead', async () => {
    const ahead = await t.app.services.accounts.create('Ahead shop')
    const shop = createClient({ apiKey: ahead.sk_test_key, baseUrl: t.url })
    await shop.testClock.advance({ seconds: 8 * 86_400 })
    hooks.answer('fail')
    const charge = await notified(shop, 700)
    const delivery = await until(
      async () => (await shop.deliveries.list({ charge: charge.id })).data[0],
      (d) => (d?.attempts.length ?? 0) > 0 && d?.attempt_count === d?.attempts.length,
      'a failed attempt',
    )
    // the call is queued on the account's clock, its next attempt is due on the real time
    expect((delivery?.next_attempt_at as string) < (delivery?.created_at as string)).toBe(true)

    const { page, errors } = await signedIn(ahead.sk_test_key)
    await page.goto(`${t.url}/dashboard#/charges/${charge.id}`)
    await page.getByText('Notify attempt 1').waitFor()
    // every moment of the history is on the account's clock, in order: no attempt among them
    const top = page.locator('.timeline > li')
    const times = await top.evaluateAll((lis) =>
      lis.map((li) => li.querySelector(':scope > time')?.getAttribute('datetime') ?? ''),
    )
    const texts = (await top.allTextContents()).join('\n')
    expect(times.every(Boolean), texts).toBe(true)
    expect([...times].sort(), texts).toEqual(times)
    const withAttempt = top.filter({ hasText: 'Notify attempt' })
    expect(await withAttempt.count(), texts).toBe(1)
    await expect(withAttempt.textContent()).resolves.toContain(`Notify call ${delivery?.id}`)
    // the attempt is listed under its call, its time labelled as the real time
    const call = top.filter({ hasText: `Notify call ${delivery?.id}` })
    const attempt = call.locator('li', { hasText: 'Notify attempt 1' })
    await expect(attempt.textContent()).resolves.toMatch(/\(real time\).*Notify attempt 1 of dlv_\w+: HTTP 503/)
    await expect(attempt.locator('time').getAttribute('title')).resolves.toMatch(/real time/)
    await expect(call.textContent()).resolves.toMatch(/next attempt .*\(real time\)/)
    await expect(page.locator('.history-note').textContent()).resolves.toMatch(/test clock.*real time/)

    await page.getByRole('link', { name: 'Notify calls' }).click()
    const item = page.locator('article.delivery', { hasText: delivery?.id as string })
    await expect(item.locator('p').textContent()).resolves.toMatch(/queued .+ · next attempt .+ \(real time\)/)
    await expect(item.locator('th', { hasText: 'Started' }).textContent()).resolves.toBe('Started (real time)')
    await expect(item.locator('td time').getAttribute('title')).resolves.toMatch(/real time/)
    expect(errors).toEqual([])
  })

  it('shows an attempt in flight as in progress, not its lease as the next attempt', async () => {
    hooks.answer('hold')
    const before = hooks.held.length
    const charge = await notified(jackdaw, 900)
    await until(
      async () => hooks.held.length,
      (n) => n > before,
      'the call to reach the receiver',
    )
    const d = (await jackdaw.deliveries.list({ charge: charge.id })).data[0]
    // the worker's lease is what the API says is next, over a minute ahead
    expect(d?.status).toBe('pending')
    expect(Date.parse(String(d?.next_attempt_at)) - Date.now()).toBeGreaterThan(60_000)

    const { page, errors } = await signedIn(t.account.sk_test_key)
    await page.getByRole('link', { name: 'Notify calls' }).click()
    const item = page.locator('article.delivery', { hasText: d?.id as string })
    await expect(item.locator('p').textContent()).resolves.toMatch(/attempt in progress/)
    expect(await item.locator('p').textContent()).not.toMatch(/next attempt/)
    await page.goto(`${t.url}/dashboard#/charges/${charge.id}`)
    const call = page.locator('.timeline > li', { hasText: `Notify call ${d?.id}` })
    await expect(call.textContent()).resolves.toMatch(/attempt in progress/)
    expect(await call.textContent()).not.toMatch(/next attempt/)

    hooks.answer('ok')
    await until(
      () => jackdaw.deliveries.retrieve(d?.id as string),
      (x) => x.status === 'delivered',
      'delivery',
    )
    await page.reload()
    await call.locator('.status-delivered').waitFor()
    expect(await call.textContent()).not.toMatch(/in progress/)
    expect(errors).toEqual([])
  })

  it('captures part of an authorization, and voids, only once the question saying what happens is confirmed', async () => {
    const partial = await jackdaw.charges.create({
      amount: 10_000,
      currency: 'usd',
      source: (await card()).id,
      capture: false,
    })
    const { page, errors } = await signedIn(t.account.sk_test_key)
    await page.goto(`${t.url}/dashboard#/charges/${partial.id}`)
    await page.getByRole('heading', { name: /\$100\.00/ }).waitFor()
    await page.locator('input[name=capture-amount]').fill('40', { timeout: 5_000 })
    await page.getByRole('button', { name: 'Capture', exact: true }).click()
    const question = page.getByTestId('confirm-question')
    await expect(question.textContent()).resolves.toBe(
      'Capture $40.00 of the $100.00 authorized? The other $60.00 is released.',
    )
    expect((await jackdaw.charges.retrieve(partial.id)).captured).toBe(false)
    await page.getByRole('button', { name: 'Cancel' }).click()
    expect(await question.count()).toBe(0)
    expect((await jackdaw.charges.retrieve(partial.id)).captured).toBe(false)
    await page.getByRole('button', { name: 'Capture', exact: true }).click()
    await page.getByRole('button', { name: 'Yes, capture' }).click()
    await page.getByRole('heading', { name: /\$40\.00/ }).waitFor()
    expect(await jackdaw.charges.retrieve(partial.id)).toMatchObject({ amount: 4000, captured: true })

    const voided = await jackdaw.charges.create({
      amount: 5000,
      currency: 'usd',
      source: (await card()).id,
      capture: false,
    })
    await page.goto(`${t.url}/dashboard#/charges/${voided.id}`)
    await page.getByRole('heading', { name: /\$50\.00/ }).waitFor()
    await page.getByRole('button', { name: 'Void', exact: true }).click()
    await expect(question.textContent()).resolves.toMatch(/^Void this charge\? Its \$50\.00 authorization is released/)
    expect((await jackdaw.charges.retrieve(voided.id)).status).toBe('succeeded')
    await page.getByRole('button', { name: 'Yes, void' }).click()
    await page.getByRole('heading', { name: /voided/ }).waitFor()
    expect((await jackdaw.charges.retrieve(voided.id)).status).toBe('voided')
    expect(errors).toEqual([])
  })

  it('asks before refunding, saying that an empty amount refunds all that is left', async () => {
    const charge = await jackdaw.charges.create({ amount: 4200, currency: 'usd', source: (await card()).id })
    const { page, errors } = await signedIn(t.account.sk_test_key)
    await page.goto(`${t.url}/dashboard#/charges/${charge.id}`)
    await page.getByRole('heading', { name: /\$42\.00/ }).waitFor()
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    const question = page.getByTestId('confirm-question')
    await expect(question.textContent({ timeout: 5_000 })).resolves.toBe(
      'Refund $42.00 (all that is left)? This cannot be undone.',
    )
    expect((await jackdaw.charges.retrieve(charge.id)).amount_refunded).toBe(0)
    // a changed amount drops the question: it would no longer say what happens
    await page.locator('input[name=refund-amount]').fill('5')
    await question.waitFor({ state: 'detached', timeout: 2_000 })
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    await expect(question.textContent()).resolves.toBe('Refund $5.00 of the $42.00 left? This cannot be undone.')
    await page.getByRole('button', { name: 'Yes, refund' }).click()
    await until(
      () => jackdaw.charges.retrieve(charge.id),
      (c) => c.amount_refunded === 500,
      'the refund',
    )
    expect(errors).toEqual([])
  })

  it('loads with no console error: the favicon is inline, allowed by the CSP', async () => {
    // a browser of its own: Chromium asks an origin for /favicon.ico once a session, not once a page
    const fresh = await launch()
    try {
      const page = await fresh.newPage()
      const errors = consoleErrors(page)
      const asked: string[] = []
      page.on('request', (r) => asked.push(new URL(r.url()).pathname))
      await page.goto(`${t.url}/dashboard`, { waitUntil: 'networkidle' })
      await page.getByLabel('Secret key').waitFor()
      // the browser asks for its icon after the load; give it the time to
      await page.waitForTimeout(1_000)
      expect(errors).toEqual([])
      expect(asked).not.toContain('/favicon.ico')
      const icon = (await page.locator('link[rel=icon]').getAttribute('href', { timeout: 1_000 })) as string
      expect(icon).toMatch(/^data:image\/svg\+xml,/)
      // the icon is an image the page's CSP allows: it loads, and the console reports no refusal
      const loaded = await page.evaluate(
        (src) =>
          new Promise<boolean>((resolve) => {
            const img = new Image()
            img.onload = () => resolve(true)
            img.onerror = () => resolve(false)
            img.src = src
          }),
        icon,
      )
      expect(loaded).toBe(true)
      expect(errors).toEqual([])
    } finally {
      await fresh.close()
    }
  })

  it('shows "Not found" for an unknown address, with a way back', async () => {
    const { page, errors } = await signedIn(t.account.sk_test_key)
    for (const hash of ['#/nonsense', '#/customers/cus_1/more']) {
      await page.evaluate((h) => {
        location.hash = h
      }, hash)
      await page.getByRole('heading', { name: 'Not found' }).waitFor({ timeout: 5_000 })
      await expect(page.locator('main').textContent()).resolves.toContain(hash)
      expect(await page.locator('table').count()).toBe(0)
      // no section reads as the one shown
      expect(await page.locator('nav.sections a.current').count()).toBe(0)
    }
    await page.getByRole('link', { name: 'Back to charges' }).click()
    await page.getByRole('heading', { name: 'Charges' }).waitFor()
    expect(page.url()).toMatch(/#\/charges$/)
    expect(errors).toEqual([])
  })
})
