import { expect } from 'vitest'
import { type Client, cardSource, type Json, REDIRECT, type Reply, type TestApp } from '../helpers/app.js'

/**
 * The hosted page a payer is sent to by `source.action.url`, driven as a browser would: GET the
 * page, POST its form (application/x-www-form-urlencoded), follow the 303.
 */

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

export interface Hosted {
  charge: Json
  /** path and query of the page, as the payer's browser asks for it */
  page: string
  /** where the page's form posts */
  action: string
  token: string
}

export function expectHtml(res: Reply, status: number) {
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

/** A card source whose charge waits for the payer's 3-D Secure step. */
export const threeDs = (number = '4000000000003220') => ({ ...cardSource({ number }), redirect: REDIRECT })

/** The steps of a payer's visit, on the app `app()` answers with. */
export function hostedSteps(app: () => TestApp) {
  /** A new charge on `source`, pending on the payer's page. */
  async function pending(source: object, extra: object = {}, as: Client = app().sk): Promise<Hosted> {
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

  /** The page's form sent as a browser sends it. */
  const submit = (path: string, fields: Record<string, string>) =>
    app().anon.post(path, new URLSearchParams(fields).toString(), FORM)

  /** The charge as the API shows it. */
  async function charge(id: string, as: Client = app().sk): Promise<Json> {
    const res = await as.get(`/v2/charges/${id}`)
    expect(res.status).toBe(200)
    return res.body
  }

  /** The page a payer sees first: the step's title, the amount, both buttons, the form. */
  async function openPage(h: Hosted, title: string): Promise<Reply> {
    const res = await app().anon.get(h.page)
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

  return { pending, submit, charge, openPage }
}
