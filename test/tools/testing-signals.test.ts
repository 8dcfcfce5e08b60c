import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Running, runTs, stopServersUnder } from '../helpers/process.js'

/** The command lines of running processes that name `dir`. */
const processesOn = (dir: string) =>
  execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(dir))

/** Waits until no process names `dir`, for a few seconds at most; those still running. */
async function settled(dir: string): Promise<string[]> {
  for (let i = 0; i < 100 && processesOn(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 50))
  return processesOn(dir)
}

/**
 * The fixture program, run with `env` and no server named (it starts one of its own, in a
 * directory under a new TMPDIR) until it is ready; then `check`. A server it leaves behind is
 * stopped after, so that a failure leaves nothing running.
 */
async function onFixture(env: Record<string, string>, check: (run: Running, tmp: string) => Promise<void>) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-signal-'))
  // as root, the server runs as postgres, which must reach its directory under this one
  chmodSync(tmp, 0o755)
  try {
    const run = runTs(['--conditions=jackdaw-source', 'test/fixtures/start-and-wait.ts'], {
      VITEST: undefined,
      JACKDAW_TESTING_POSTGRES_URL: undefined,
      TMPDIR: tmp,
      ...env,
    })
    await run.waitFor(/ready/, 60_000)
    await check(run, tmp)
  } finally {
    stopServersUnder(tmp)
    rmSync(tmp, { recursive: true, force: true })
  }
}

describe('a process that uses startJackdaw outside a test runner, stopped by a signal', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`leaves no PostgreSQL server and no directory behind, and ends by the signal: ${signal}`, async () => {
      await onFixture({}, async (run, tmp) => {
        run.child.kill(signal)
        await run.exited
        expect(run.child.signalCode).toBe(signal)
        expect(await settled(tmp)).toEqual([])
        expect(readdirSync(tmp).filter((f) => f.startsWith('jackdaw-testing-'))).toEqual([])
      })
    }, 90_000)
  }

  it.each(['after', 'before'])(
    "leaves the signal to the program's own handler (set %s startJackdaw), and still stops the server as it exits",
    async (when) => {
      await onFixture({ OWN_SIGNAL_HANDLER: when }, async (run, tmp) => {
        run.child.kill('SIGINT')
        expect(await run.exited).toBe(0)
        expect(run.output()).toContain('closed by its own handler')
        expect(await settled(tmp)).toEqual([])
      })
    },
    90_000,
  )
})
