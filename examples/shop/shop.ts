/**
 * A small shop that takes payment with Jackdaw: an order charges a card, and the notify calls
 * Jackdaw sends settle the orders that waited for their payer (3-D Secure).
 *
 *   POST /orders        {amount, currency, card}   → 201 {id, status, charge}
 *   GET  /orders/:id                               → 200 {id, status, charge}
 *   POST /jackdaw/notify                            the notify calls, signed with the webhook secret
 *
 * An order is `paid`, `declined` or `awaiting_payment` (the payer has a page to answer).
 */
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { SIGNATURE_HEADER, verifySignature } from 'jackdaw/client'

export interface ShopSettings {
  /** where Jackdaw answers */
  jackdawUrl: string
  publicKey: string
  secretKey: string
  webhookSecret: string
}

export interface Order {
  id: string
  status: 'paid' | 'declined' | 'awaiting_payment'
  charge: string
  /** the event ids of the notify calls taken, so a repeated call is taken once */
  events: string[]
}

interface Charge {
  id: string
  status: 'succeeded' | 'failed' | 'pending'
  source: { action?: { url?: string } }
}

const statusOf = (charge: Pick<Charge, 'status'>): Order['status'] =>
  charge.status === 'succeeded' ? 'paid' : charge.status === 'failed' ? 'declined' : 'awaiting_payment'

export interface Shop {
  url: string
  orders: Map<string, Order>
  close(): Promise<void>
}

export async function startShop(settings: ShopSettings): Promise<Shop> {
  const orders = new Map<string, Order>()
  let shopUrl = ''

  async function jackdaw<T>(path: string, key: string, body: unknown, idempotencyKey?: string): Promise<T> {
    const res = await fetch(new URL(path, settings.jackdawUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: JSON.stringify(body),
    })
    const answer = await res.json()
    if (!res.ok) throw new Error(`Jackdaw answered ${res.status}: ${JSON.stringify(answer)}`)
    return answer as T
  }

  async function placeOrder(input: { amount: number; currency: string; card: Record<string, string> }) {
    const id = `order_${randomUUID()}`
    // the card goes to Jackdaw with the public key, as a browser would send it
    const source = await jackdaw<{ id: string }>('/v2/sources/', settings.publicKey, {
      type: 'card',
      card: input.card,
      redirect: {
        success: `${shopUrl}/orders/${id}`,
        fail: `${shopUrl}/orders/${id}`,
        notify: `${shopUrl}/jackdaw/notify`,
      },
    })
    const charge = await jackdaw<Charge>(
      '/v2/charges/',
      settings.secretKey,
      { amount: input.amount, currency: input.currency, source: source.id, metadata: { order: id } },
      id,
    )
    const order: Order = { id, status: statusOf(charge), charge: charge.id, events: [] }
    orders.set(id, order)
    return { ...order, payer_url: charge.source.action?.url }
  }

  function takeNotifyCall(raw: string, signature: string | string[] | undefined): number {
    if (!verifySignature(raw, signature, settings.webhookSecret)) return 400
    const event = JSON.parse(raw) as {
      id: string
      type: string
      data: { object: Charge & { metadata: { order?: string } } }
    }
    const order = orders.get(event.data.object.metadata.order ?? '')
    if (!order || order.events.includes(event.id)) return 200
    order.events.push(event.id)
    if (event.type === 'charge.succeeded' || event.type === 'charge.failed') order.status = statusOf(event.data.object)
    return 200
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    }
    try {
      if (req.method === 'POST' && req.url === '/orders') return answer(201, await placeOrder(JSON.parse(raw)))
      if (req.method === 'POST' && req.url === '/jackdaw/notify') {
        return answer(takeNotifyCall(raw, req.headers[SIGNATURE_HEADER.toLowerCase()]), {})
      }
      const order = req.method === 'GET' && orders.get(req.url?.replace('/orders/', '') ?? '')
      if (order) return answer(200, order)
      answer(404, { error: 'no such page' })
    } catch (err) {
      answer(502, { error: (err as Error).message })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  shopUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: shopUrl,
    orders,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
