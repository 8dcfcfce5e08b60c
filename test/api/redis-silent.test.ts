import { randomBytes } from 'node:crypto'
import { createConnection, createServer, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { newApiKey } from '../../src/domain/keys.js'
import { openRedis } from '../../src/redis.js'
import { client, type TestApp, testApp } from '../helpers/app.js'

const REDIS_URL = process.env.REDIS_URL

/**
 * A Redis that stops answering without closing its connections (its host lost, a firewall dropping
 * packets): a relay to the test's Redis that stops passing anything on. Requests go on without it,
 * as they do when Redis cannot be reached at all: the rate limit lets them through uncounted, and
 * unknown keys are counted by the process alone.
 */
async function relayToRedis() {
  const target = new URL(REDIS_URL as string)
  let silent = false
  const sockets: Socket[] = []
  const server = createServer((down) => {
    const up = createConnection(Number(target.port || 6379), target.hostname)
    sockets.push(down, up)
    down.on('data', (d) => silent || up.write(d))
    up.on('data', (d) => silent || down.write(d))
    for (const s of [down, up]) s.on('error', () => {})
    down.on('close', () => up.destroy())
    up.on('close', () => down.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `redis://127.0.0.1:${port}`,
    goSilent: () => {
      silent = true
    },
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

const opened: { close: () => Promise<unknown> }[] = []
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close()
})

/** The service's Redis client, through a relay that can go silent, and an app counting on it. */
async function appOnSilentRedis(limits: (redis: ReturnType<typeof openRedis>, namespace: string) => object) {
  const relay = await relayToRedis()
  opened.push(relay)
  const redis = openRedis(relay.url, () => {})
  opened.push({ close: async () => redis.disconnect() })
  await new Promise((ready) => redis.once('ready', ready))
  const namespace = `jackdaw-test-${randomBytes(4).toString('hex')}`
  const t: TestApp = await testApp({}, limits(redis, namespace))
  opened.push(t)
  return { t, relay }
}

describe.runIf(REDIS_URL)('Redis that stops answering mid-run', () => {
  it('requests with a key are still answered, uncounted, instead of waiting on it', async () => {
    const { t, relay } = await appOnSilentRedis((redis, namespace) => ({
      rateLimit: { max: 100, windowMs: 1000, redis, namespace: `${namespace}:` },
    }))
    expect((await t.sk.get('/v2/me')).status).toBe(200)
    relay.goSilent()
    for (let i = 0; i < 3; i++) expect((await t.sk.get('/v2/me')).status).toBe(200)
  })

  it('unknown keys are still refused, counted by the process alone', async () => {
    const { t, relay } = await appOnSilentRedis((redis, namespace) => ({
      authFailures: { max: 3, windowSeconds: 300, redis, namespace },
    }))
    expect((await client(t.app, newApiKey('secret', false)).get('/v2/me')).status).toBe(401)
    relay.goSilent()
    const answers: number[] = []
    for (let i = 0; i < 5; i++) answers.push((await client(t.app, newApiKey('secret', false)).get('/v2/me')).status)
    // the process's own count still stops the guessing
    expect(answers).toContain(401)
    expect(answers.at(-1)).toBe(429)
  })
})
