import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.js'
import { Vault } from '../../src/crypto/vault.js'
import { type Client, cardSource, client, REDIRECT, type Reply, testOptions } from '../helpers/app.js'
import { type TestStore, testStore } from '../helpers/store.js'
import { type Receiver, sleep, startReceiver, waitFor } from './notify-harness.js'

const EVENTS = 200
const SCRIPT = fileURLToPath(new URL('./notify-worker-process.ts', import.meta.url))

interface Worker {
  child: ChildProcess
  ready: Promise<void>
  delivered: string[]
  exited: Promise<number | null>
}

function spawnWorker(env: Record<string, string>): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const delivered: string[] = []
  let onReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
  })
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    let entry: { msg?: string; delivery?: string; ready?: boolean }
    try {
      entry = JSON.parse(line)
    } catch {
      return
    }
    if (entry.ready) onReady()
    if (entry.msg === 'notify call delivered' && entry.delivery) delivered.push(entry.delivery)
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, ready, delivered, exited }
}

describe('two service processes on one PostgreSQL database', () => {
  let store: TestStore
  let sk: Client
  let receiver: Receiver
  let close: () => Promise<void>
  const workers: Worker[] = []
  const perEvent = new Map<string, number>()
  const inFlight = new Set<string>()
  let overlapping = 0

  beforeAll(async () => {
    store = await testStore()
    const key = randomBytes(32)
    const app = await createApp({ db: store.db, vault: new Vault(key), logger: false, options: testOptions() })
    await app.ready()
    close = () => app.close()
    const account = await app.services.accounts.create('Two workers')
    sk = client(app, account.sk_test_key)
    receiver = await startReceiver(async (_n, body) => {
      const id = JSON.parse(body).id as string
      if (inFlight.has(id)) overlapping++
      inFlight.add(id)
      perEvent.set(id, (perEvent.get(id) ?? 0) + 1)
      // answers take a little while, so both workers have calls in flight at once
      await sleep(5 + Math.floor(Math.random() * 20))
      inFlight.delete(id)
      return 200
    })
    const env = {
      JACKDAW_TEST_PG_URL: store.url,
      JACKDAW_TEST_KEY: key.toString('base64'),
    }
    workers.push(spawnWorker(env), spawnWorker(env))
    await Promise.all(workers.map((w) => w.ready))
  })

  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGTERM')
    await Promise.all(workers.map((w) => w.exited))
    await receiver?.close()
    await close?.()
    await store?.close()
  })

  it(`delivers each of ${EVENTS} events exactly once`, async () => {
    const notify = { ...REDIRECT, notify: receiver.url }
    const made: string[] = []
    for (let batch = 0; batch < EVENTS / 10; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          const src = await sk.post('/v2/sources/', { ...cardSource(), redirect: notify })
          const ch = await sk.post('/v2/charges/', { amount: 1000, currency: 'usd', source: src.body.id })
          expect(ch.status).toBe(201)
          made.push(ch.body.id)
        }),
      )
    }

    const events: string[] = []
    let path: string | null = '/v2/events/?limit=100'
    while (path) {
      const page: Reply = await sk.get(path)
      events.push(...page.body.data.map((e: { id: string }) => e.id))
      path = page.body.next
    }
    expect(events).toHaveLength(EVENTS)

    await waitFor('every event at the receiver', async () => perEvent.size === EVENTS, 45_000)
    const deliveries: { status: string; attempts: unknown[] }[] = []
    await waitFor('every delivery recorded delivered', async () => {
      deliveries.length = 0
      let p: string | null = '/v2/deliveries/?limit=100'
      while (p) {
        const page: Reply = await sk.get(p)
        deliveries.push(...page.body.data)
        p = page.body.next
      }
      return deliveries.length === EVENTS && deliveries.every((d) => d.status === 'delivered')
    })
    // anything sent twice would have arrived by now
    await sleep(500)

    expect([...perEvent.keys()].sort()).toEqual([...events].sort())
    expect([...perEvent.values()].every((n) => n === 1)).toBe(true)
    expect(receiver.calls).toHaveLength(EVENTS)
    expect(overlapping).toBe(0)
    expect(deliveries.every((d) => d.attempts.length === 1)).toBe(true)

    // both processes took part, and between them made each call once
    const [a, b] = workers.map((w) => w.delivered) as [string[], string[]]
    expect(a.length).toBeGreaterThan(0)
    expect(b.length).toBeGreaterThan(0)
    expect(a.length + b.length).toBe(EVENTS)
    expect(new Set([...a, ...b]).size).toBe(EVENTS)
  })
})
