import assert from 'node:assert/strict'
import { type RunningJackdaw, startJackdaw } from 'jackdaw/testing'
import { after, before, describe, it } from './runner.js'
import { type Shop, startShop } from './shop.js'

const CARD = { name: 'Ann Lee', number: '4242424242424242', exp_month: '12', exp_year: '2040', cvc: '123' }

let jackdaw: RunningJackdaw
let shop: Shop

before(async () => {
  jackdaw = await startJackdaw()
  shop = await startShop({
    jackdawUrl: jackdaw.url,
    publicKey: jackdaw.keys.pk_test_key,
    secretKey: jackdaw.keys.sk_test_key,
    webhookSecret: jackdaw.keys.webhook_secret_test,
  })
})

after(async () => {
  await shop?.close()
  await jackdaw?.close()
})

async function order(card: Record<string, string>, amount = 2500) {
  const res = await fetch(`${shop.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount, currency: 'eur', card }),
  })
  assert.equal(res.status, 201)
  return (await res.json()) as { id: string; status: string; charge: string; payer_url?: string }
}

/** Waits until the shop has taken `count` notify calls for an order. */
async function notified(id: string, count: number) {
  for (let i = 0; i < 100; i++) {
    const taken = shop.orders.get(id)?.events.length ?? 0
    if (taken >= count) return shop.orders.get(id)
    await new Promise((r) => setTimeout(r, 100))
  }
  assert.fail(`the shop took fewer than ${count} notify calls for ${id}`)
}

describe('the shop, paid through Jackdaw', () => {
  it('charges the card of an order and is told of it', async () => {
    const placed = await order(CARD)
    assert.equal(placed.status, 'paid')
    const charge = await jackdaw.client.charges.retrieve(placed.charge)
    assert.equal(charge.amount, 2500)
    assert.equal(charge.status, 'succeeded')
    const settled = await notified(placed.id, 1)
    assert.equal(settled?.status, 'paid')
  })

  it('records a declined card as a declined order', async () => {
    const placed = await order({ ...CARD, number: '4000000000000002' })
    assert.equal(placed.status, 'declined')
  })

  it('settles an order once its payer approves 3-D Secure, from the notify call', async () => {
    const placed = await order({ ...CARD, number: '4000000000003220' })
    assert.equal(placed.status, 'awaiting_payment')
    assert.match(placed.payer_url ?? '', /^http:\/\/127\.0\.0\.1:\d+\//)
    // the payer's answer, given without a browser
    const answered = await jackdaw.client.charges.testAuthorize(placed.charge, { decision: 'approve' })
    assert.equal(answered.status, 'succeeded')
    // charge.pending, then charge.succeeded
    const settled = await notified(placed.id, 2)
    assert.equal(settled?.status, 'paid')
  })

  it('refuses a notify call that Jackdaw did not sign', async () => {
    const res = await fetch(`${shop.url}/jackdaw/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'jackdaw-signature': 't=1,v1=00' },
      body: '{}',
    })
    assert.equal(res.status, 400)
  })
})
