import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { formatAmount } from '../../domain/amount-format.js'
import { redirectAddressProblem } from '../../domain/redirect-address.js'
import { AppError } from '../../errors.js'
import type { PayerStep } from '../../processor/processor.js'
import type { HostedPageUrl } from '../../services/charges/index.js'
import type { Services } from '../../services/index.js'
import { baseUrlOf } from '../base-url.js'
import { catalogErrorOf } from '../error-handlers.js'
import { errorPage, escapeHtml, HOSTED_PAGE_HEADERS, HOSTED_PATH, HTML, NOT_FOUND_PAGE, page } from '../hosted-page.js'

/** The address of a charge's hosted page under `base`, opened by its token. */
export const hostedPageUrl =
  (base: string): HostedPageUrl =>
  (chargeId, token) =>
    `${base}${HOSTED_PATH}/${chargeId}?token=${token}`

/** Hosted-page addresses as a request's payer reaches this service. */
export const hostedPageUrlOf = (req: FastifyRequest, publicUrl: string | undefined) =>
  hostedPageUrl(baseUrlOf(req, publicUrl))

const TITLES: Record<PayerStep, { title: string; text: string }> = {
  three_d_secure: { title: '3-D Secure authentication', text: 'Your bank asks you to confirm this card payment.' },
  wallet: { title: 'Approve the payment in your wallet', text: 'Your wallet asks you to approve this payment.' },
  card_scheme: { title: 'Approve the card-scheme payment', text: 'Confirm this payment with your card scheme.' },
  qr: { title: 'Scan to pay', text: 'Scan the code with your banking app, then confirm the payment.' },
  bank: { title: 'Log in to your bank', text: 'Link your bank account and approve this transfer.' },
  otp: { title: 'One-time password', text: 'Enter the code your bank sent you.' },
}

const TOO_LATE = 'The time to answer this payment has run out.'

/** The page of a payment the payer has nothing left to do for. */
const outcomePage = (status: string, text: string) =>
  page('Payment', `<h1>Payment ${escapeHtml(status)}</h1><p>${escapeHtml(text)}</p>`)

const Params = Type.Object({ ch_id: Type.String({ minLength: 1, maxLength: 100 }) })
const Query = Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) })
const Form = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 200 })),
  decision: Type.Optional(Type.String({ maxLength: 20 })),
})

/**
 * The page a payer is sent to by `action.url`: a test-mode stand-in for a bank's 3-D Secure
 * challenge, a wallet's approval screen, a QR code or a bank login. The payer approves or
 * declines; the charge moves on and the browser goes to the source's success or fail address.
 */
export const hostedRoutes: FastifyPluginAsyncTypebox<{ services: Services; publicUrl?: string | undefined }> = async (
  app,
  { services, publicUrl },
) => {
  await app.register(formbody, { bodyLimit: 4096 })
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(HOSTED_PAGE_HEADERS)
    done()
  })

  // a payer's browser gets a page, never the API's JSON, for whatever it sent wrong too (a link
  // with its token twice or too long, a form too large, too many tries) and for a fault of the
  // service's, which says to try again and names no internals
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    const unreadable = 'validation' in err
    const caught = catalogErrorOf(err, request)
    if (caught.headers) reply.headers(caught.headers)
    return reply
      .code(unreadable ? 400 : caught.status)
      .type(HTML)
      .send(errorPage(caught, unreadable))
  })

  const notFound = (reply: import('fastify').FastifyReply) => reply.code(404).type(HTML).send(NOT_FOUND_PAGE)

  app.get(
    `${HOSTED_PATH}/:ch_id`,
    { config: { auth: 'none' }, schema: { hide: true, params: Params, querystring: Query } },
    async (req, reply) => {
      const found = await services.charges.hostedCharge(req.params.ch_id, req.query.token ?? '')
      if (!found) return notFound(reply)
      const { step, merchant } = found
      reply.type(HTML)
      if (found.expired) return outcomePage('failed', `${TOO_LATE} There is nothing left to do here.`)
      if (found.status !== 'pending' || !step) {
        return outcomePage(found.status, 'There is nothing left to do here.')
      }
      const t = TITLES[step]
      // the form posts to the page's own address, relative to it (so under JACKDAW_PUBLIC_URL's
      // path too), from a page asked for with a trailing slash as without one
      const action = (req.url.split('?')[0] ?? '').endsWith('/') ? `../${found.id}` : found.id
      const qr = step === 'qr' ? `<p class="qr">JACKDAW-QR:${escapeHtml(found.id)}</p>` : ''
      return page(
        t.title,
        `${found.livemode ? '' : '<p><span class="test">TEST MODE</span></p>\n'}<h1>${escapeHtml(t.title)}</h1><p>${escapeHtml(t.text)}</p>
<p>${escapeHtml(merchant)}</p><p class="amount">${escapeHtml(formatAmount(found.amount, found.currency))}</p>${qr}
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="token" value="${escapeHtml(req.query.token ?? '')}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="decline">Decline</button>
</form>`,
      )
    },
  )

  app.post(
    `${HOSTED_PATH}/:ch_id`,
    { config: { auth: 'none' }, schema: { hide: true, params: Params, body: Form } },
    async (req, reply) => {
      const decision = req.body.decision
      if (decision !== 'approve' && decision !== 'decline') {
        return reply.code(400).type(HTML).send(page('Payment', '<h1>Choose approve or decline</h1>'))
      }
      let done: Awaited<ReturnType<Services['charges']['hostedAnswer']>>
      try {
        done = await services.charges.hostedAnswer(
          req.params.ch_id,
          req.body.token ?? '',
          decision === 'approve',
          hostedPageUrlOf(req, publicUrl),
        )
      } catch (err) {
        // a payer's browser gets a page, never the API's JSON (the handler above pages the rest)
        if (err instanceof AppError && err.status === 404) return notFound(reply)
        throw err
      }
      if (!done) return notFound(reply)
      const { charge: view, returnTo, expired } = done
      // an address that breaks the scheme rules is never followed: the page says the outcome instead
      if (returnTo && !redirectAddressProblem('redirect', returnTo, view.livemode)) return reply.redirect(returnTo, 303)
      if (view.status === 'pending' && !expired) return reply.redirect(view.source.action?.url ?? view.id, 303)
      reply.type(HTML)
      if (expired) return outcomePage('failed', `${TOO_LATE} You can close this page.`)
      return outcomePage(view.status, 'You can close this page.')
    },
  )
}
