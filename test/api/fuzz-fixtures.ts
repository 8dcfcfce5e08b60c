import type { AccountKeys } from '../../src/services/accounts.js'
import { client, REDIRECT, type Reply, TEST_CARD, type TestApp } from '../helpers/app.js'
import { ADMIN_TOKEN } from '../helpers/fuzz-requests.js'
import type { Fixtures } from '../helpers/fuzz-routes.js'

// ---------------------------------------------------------------------------------------------
// Fixtures: objects in every state, so that requests reach the handlers and the state machine
// ---------------------------------------------------------------------------------------------

/** What the fixtures read of the answers they get. */
interface Made {
  id: string
  source: { action?: { url?: string; confirmation_id?: string } }
  /** a list: objects' ids, the scenarios' names */
  data: { id: string; name: string }[]
}

export async function makeFixtures(t: TestApp): Promise<Fixtures> {
  const ok = async (p: Promise<Reply<Made>>, status = 200): Promise<Made> => {
    const r = await p
    if (r.status !== status) throw new Error(`fixture: ${r.status} ${r.text}`)
    return r.body
  }
  const card = async (number = '4242424242424242', c = t.sk) =>
    (await ok(c.post('/v2/sources/', { type: 'card', card: { ...TEST_CARD, number } }))).id as string
  const redirectSource = async (type: string) =>
    (await ok(t.sk.post('/v2/sources/', { type, redirect: REDIRECT }))).id as string
  const charge = async (source: string, extra: Record<string, unknown> = {}) =>
    ok(t.sk.post('/v2/charges/', { amount: 5000, currency: 'usd', source, ...extra }), 201)
  const tokenOf = (ch: Made) => new URL(ch.source.action?.url ?? '').searchParams.get('token') as string

  const captured = await charge(await card())
  const partlyRefunded = await charge(await card('5555555555554444'))
  await ok(t.sk.post(`/v2/charges/${partlyRefunded.id}/refund`, { amount: 1000 }))
  const refunded = await charge(await card())
  await ok(t.sk.post(`/v2/charges/${refunded.id}/refund`, {}))
  const authorized = await charge(await card(), { capture: false })
  const voided = await charge(await card(), { capture: false })
  await ok(t.sk.post(`/v2/charges/${voided.id}/void`, {}))
  const pending3ds = await charge(await card('4000000000003220'))
  const declined = await charge(await card('4000000000000002'))
  const pendingWallet = await charge(await redirectSource('wallet_b'))
  const pendingQr = await charge(await redirectSource('qr_a'))

  const customer = await ok(t.sk.post('/v2/customers/', { email: 'Fuzz.Payer@Example.com', description: 'fuzz' }), 201)
  const empty = await ok(t.sk.post('/v2/customers/', { email: 'empty@example.com', description: 'no sources' }), 201)
  const vaultedCard = await card()
  await ok(t.sk.post(`/v2/customers/${customer.id}/sources`, { source: vaultedCard }))
  const bank = await redirectSource('transfer_a')
  await ok(t.sk.post(`/v2/customers/${customer.id}/sources`, { source: bank }))
  const firstBank = await charge(bank, { customer: customer.id })
  await ok(t.sk.post(`/v2/test/charges/${firstBank.id}/authorize`, { decision: 'approve' }))
  const pendingOtp = await charge(bank, { customer: customer.id })
  const vaultedCharge = await charge(vaultedCard, { customer: customer.id, capture: false })

  const liveSource = await card('4242424242424242', t.skLive)
  const liveCustomer = await ok(t.skLive.post('/v2/customers/', { email: 'live@example.com', description: 'l' }), 201)

  // a notify address queues a delivery with each event of the charge (no worker sends it here)
  const notified = await ok(
    t.sk.post('/v2/sources/', {
      type: 'card',
      card: TEST_CARD,
      redirect: { ...REDIRECT, notify: 'http://127.0.0.1:9/notify' },
    }),
  )
  await charge(notified.id)
  const deliveries = await ok(t.sk.get('/v2/deliveries/?limit=3'))

  const events = await ok(t.sk.get('/v2/events/?limit=5'))

  // accounts of the operator's: the sandbox the test-mode routes act on, and accounts to remove
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  const account = async (name: string) => {
    const r = await t.anon.post<AccountKeys>('/v2/accounts', { name }, admin)
    if (r.status !== 201) throw new Error(`fixture: ${r.status} ${r.text}`)
    return r.body
  }
  const sandbox = await account('Fuzz sandbox')
  const sandboxSk = client(t.app, sandbox.sk_test_key)
  const sandboxCustomer = await ok(sandboxSk.post('/v2/customers/', { email: 's@example.com', description: 's' }), 201)
  const scenarios = await ok(sandboxSk.get('/v2/test/scenarios'))
  const removable = [await account('Fuzz removable 1'), await account('Fuzz removable 2')]
  return {
    src: [await card(), await card('4000000000003220'), await redirectSource('wallet_a'), vaultedCard, bank],
    ch: [
      captured.id,
      partlyRefunded.id,
      refunded.id,
      authorized.id,
      voided.id,
      pending3ds.id,
      declined.id,
      pendingWallet.id,
      pendingQr.id,
      firstBank.id,
      pendingOtp.id,
      vaultedCharge.id,
    ],
    cus: [customer.id, empty.id],
    evt: events.data.map((e) => e.id),
    dlv: deliveries.data.map((d) => d.id),
    email: ['Fuzz.Payer@Example.com', 'fuzz.payer@example.com', 'empty@example.com', 'live@example.com'],
    hosted: [pending3ds, pendingWallet, pendingQr].map((c) => ({ ch: c.id, token: tokenOf(c) })),
    confirmation: [pendingOtp.source.action?.confirmation_id ?? 'conf_none'],
    state: {
      authorized: [authorized.id, vaultedCharge.id],
      captured: [captured.id, partlyRefunded.id],
      pending: [pending3ds.id, pendingWallet.id, pendingQr.id],
      otp: [pendingOtp.id],
    },
    foreign: [liveSource, liveCustomer.id],
    keys: {
      skTest: t.account.sk_test_key,
      pkTest: t.account.pk_test_key,
      skLive: t.account.sk_live_key,
      pkLive: t.account.pk_live_key,
    },
    sandbox: {
      keys: {
        skTest: sandbox.sk_test_key,
        pkTest: sandbox.pk_test_key,
        skLive: sandbox.sk_live_key,
        pkLive: sandbox.pk_live_key,
      },
      cus: [sandboxCustomer.id],
    },
    acct: removable.map((a) => a.id),
    scenario: scenarios.data.map((s) => s.name),
  }
}
