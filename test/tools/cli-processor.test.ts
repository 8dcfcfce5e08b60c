import { createServer, type Server } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { runTs } from '../helpers/process.js'

// `jackdaw processor` told a port or host it cannot listen on: a plain line naming the option
const env = { JACKDAW_LIVE_PROCESSOR_SECRET: 'a-shared-secret-of-some-length', DATABASE_URL: undefined }
const STACK = /\n\s+at /

/** The command run to its end; stopped when the test ends, should it listen after all. */
async function processor(...args: string[]) {
  const run = runTs(['src/cli.ts', 'processor', ...args], env)
  onTestFinished(() => void run.stop())
  const code = await run.exited
  return { code, output: run.output() }
}

let taken: Server
let takenPort: number
beforeAll(async () => {
  taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  takenPort = (taken.address() as { port: number }).port
})
afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())))

describe('jackdaw processor: where it cannot listen', () => {
  it.each(['abc', '99999', '65536', '-1', '1.5', ''])(
    '--port=%s is a usage error',
    async (port) => {
      const res = await processor(`--port=${port}`)
      expect(res.code, res.output).toBe(2)
      expect(res.output).toContain('jackdaw: --port must be 0 to 65535')
      expect(res.output).not.toMatch(STACK)
    },
    60_000,
  )

  it('a port in use is told plainly, naming --port', async () => {
    const res = await processor('--port', String(takenPort))
    expect(res.code, res.output).toBe(1)
    expect(res.output).toContain(`jackdaw: --port ${takenPort} is in use`)
    expect(res.output).not.toContain('set PORT')
    expect(res.output).not.toMatch(STACK)
  }, 60_000)

  it.each([
    ['a name that does not resolve', 'nosuch.invalid'],
    ['an address of no interface of this machine', '192.0.2.1'],
  ])(
    '--host of %s is told plainly, naming --host',
    async (_what, host) => {
      const res = await processor('--port', '0', '--host', host)
      expect(res.code, res.output).toBe(1)
      expect(res.output).toContain(`jackdaw: --host ${host} names no address of this machine to listen on`)
      expect(res.output).not.toMatch(STACK)
    },
    60_000,
  )
})
