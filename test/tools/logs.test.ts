import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

/** The service logs lines for a person at a terminal, and JSON, one object a line, otherwise. */

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Runs `jackdaw serve`, through `script` (a pseudo-terminal) when `terminal`; answers its output after one request. */
async function serveAndRequest(terminal: boolean): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'jackdaw-logs-'))
  dirs.push(dir)
  const env = { ...process.env, LOG_LEVEL: 'info', JACKDAW_DATA_DIR: dir, PORT: '0', DATABASE_URL: '' }
  delete (env as Record<string, string | undefined>).DATABASE_URL
  // the built command, as helpers/process.ts runs it
  const command = [process.execPath, 'dist/cli.js', 'serve']
  const child = terminal
    ? spawn('script', ['-qfec', command.join(' '), '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(command[0] as string, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout?.on('data', (d) => {
    out += d.toString()
  })
  child.stderr?.on('data', (d) => {
    out += d.toString()
  })
  try {
    const started = Date.now()
    let base: string | undefined
    while (!base) {
      base = /listening on (http:\/\/[\d.:]+)/.exec(out)?.[1]
      if (Date.now() - started > 60_000) throw new Error(`not listening: ${out}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    expect((await fetch(`${base}/v2/me`)).status).toBe(401)
    while (!out.includes('request completed')) {
      if (Date.now() - started > 60_000) throw new Error(`no request logged: ${out}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    return out
  } finally {
    child.kill('SIGTERM')
    await new Promise((r) => child.on('exit', r))
  }
}

describe('logs', () => {
  it('are JSON lines when the output is not a terminal', async () => {
    const out = await serveAndRequest(false)
    const line = out.split('\n').find((l) => l.includes('request completed')) as string
    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'request completed', res: { statusCode: 401 } })
  }, 120_000)

  it('are lines for a person when the output is a terminal', async () => {
    const out = await serveAndRequest(true)
    const line = out.split('\n').find((l) => l.includes('request completed')) as string
    expect(line.trim().startsWith('{')).toBe(false)
    expect(line).toMatch(/\[\d{2}:\d{2}:\d{2}\.\d{3}\].*INFO.*request completed/)
  }, 120_000)
})
