import net, { type AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { notifySchedule, parseConfig } from '../../src/config.js'
import { NotifyAllowList, NotifyHostResolver } from '../../src/services/notify-address.js'
import { type Client, cardSource, client, REDIRECT } from '../helpers/app.js'
import { fakeDns } from '../helpers/dns.js'
import { chargeNotifying, deliveryOf, settled, sleep, waitFor } from './notify-harness.js'
import { cleanup, receiver, service, useNotifyServices } from './notify-services.js'

/**
 * Where notify calls go and how many at once: never to the service's own network unless allowed,
 * each account and host held to its share, and the default schedule of retries.
 */

useNotifyServices()

describe("notify calls to the service's own network", () => {
  it('are refused in test mode too, unless the operator allows the receiver, and attempts record a class of error', async () => {
    const r = await receiver(() => 200)
    const port = new URL(r.url).port
    const dns = await fakeDns((name, type) => (name === 'inside.test' && type === 'A' ? ['127.0.0.1'] : []))
    cleanup.push(() => dns.close())
    // a generous limit: on a loaded machine the fake name server answers late
    const notifyResolver = new NotifyHostResolver({ servers: [dns.server], timeoutMs: 5_000 })
    const s = await service(
      { schedule: [], timeoutMs: 2000, pollMs: 50 },
      { notifyAllow: NotifyAllowList.none, notifyResolver },
    )
    // addresses are refused when the source is made, with the published test key
    for (const notify of [
      r.url,
      'http://127.0.0.1:5432/',
      'http://127.0.0.1:6379/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:127.0.0.1]:5432/',
      `http://localhost:${port}/`,
    ]) {
      const refused = await s.pk.post('/v2/sources/', { ...cardSource(), redirect: { ...REDIRECT, notify } })
      expect(refused.status, notify).toBe(422)
      expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'redirect.notify' })
    }
    // a name is checked when it is called: this one resolves to loopback, and no call is made
    const { event } = await chargeNotifying(s.sk, `http://inside.test:${port}/hook`)
    const d = await deliveryOf(s.sk, event.id)
    const failed = await settled(s.sk, d.id, 'failed')
    expect(failed.attempts).toEqual([expect.objectContaining({ status_code: null, error: 'address_refused' })])
    expect(r.calls).toHaveLength(0)
    // a receiver nothing listens on says no more than that (the worker that refuses local
    // receivers stops first: on one store, either worker could take the call)
    await s.close()
    const closed = `http://127.0.0.1:${await closedPort()}/hook`
    const allowed = await service({ schedule: [], timeoutMs: 2000, pollMs: 50 })
    const refusedCall = await chargeNotifying(allowed.sk, closed)
    const attempt = (await settled(allowed.sk, (await deliveryOf(allowed.sk, refusedCall.event.id)).id, 'failed'))
      .attempts[0]
    expect(attempt).toMatchObject({ status_code: null, error: 'connection_refused' })
  })
})

/** A port of 127.0.0.1 that nothing listens on: one the system handed out and took back. */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('notify calls of several accounts', () => {
  it("one account's receivers that never answer hold back neither another account's calls nor more than their share", async () => {
    const s = await service({
      schedule: [],
      timeoutMs: 60_000,
      pollMs: 50,
      concurrency: 10,
      accountConcurrency: 3,
      hostConcurrency: 5,
    })
    const hanging = await receiver(() => 'hang')
    const answering = await receiver(() => 200)
    const accountOf = async (name: string) => client(s.app, (await s.app.services.accounts.create(name)).sk_test_key)
    const [a, b, c] = [s.sk, await accountOf('Account B'), await accountOf('Account C')]
    const queue = async (as: Client, url: string, n: number) => {
      const events = new Set<string>()
      for (let i = 0; i < n; i += 10) {
        const made = await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => chargeNotifying(as, url)))
        for (const { event } of made) events.add(event.id)
      }
      return events
    }
    // account A: 40 calls to a receiver that accepts and never answers
    const ofA = await queue(a, hanging.url, 40)
    await waitFor('A at its share', async () => hanging.calls.length >= 3)
    // account C: 10 more to the same host, which takes 5 calls at most, whoever makes them
    const ofC = await queue(c, hanging.url, 10)
    await waitFor('the host at its cap', async () => hanging.calls.length >= 5)
    // account B's one call goes out at once
    const queuedAt = Date.now()
    await chargeNotifying(b, answering.url)
    await waitFor('B called', async () => answering.calls.length === 1, 10_000)
    expect(Date.now() - queuedAt).toBeLessThan(2_000)
    await sleep(300)
    // A kept to its 3, the host to its 5: the other 45 calls wait their turn
    const ids = hanging.calls.map((call) => JSON.parse(call.body).id as string)
    expect(ids.filter((id) => ofA.has(id))).toHaveLength(3)
    expect(ids.filter((id) => ofC.has(id))).toHaveLength(2)
    expect(ids).toHaveLength(5)
  })
})

describe('the default schedule of notify calls', () => {
  it('is about 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, then every 12 h, and stops within 3 days', () => {
    const gaps = notifySchedule(parseConfig({}))
    expect(gaps.slice(0, 6)).toEqual([60, 300, 1800, 7200, 18000, 36000])
    expect(new Set(gaps.slice(6))).toEqual(new Set([12 * 3600]))
    const lastCall = gaps.reduce((a, b) => a + b, 0)
    expect(lastCall).toBeLessThanOrEqual(3 * 24 * 3600)
    // one more 12 h gap would go past the 3 days
    expect(lastCall + 12 * 3600).toBeGreaterThan(3 * 24 * 3600)
  })
})
