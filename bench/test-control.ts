/**
 * `npm run bench:test-control`: how long a test suite waits on Jackdaw's test-control plane, on
 * one embedded PostgreSQL for the run (as a Vitest global setup starts it). Measures, as the median
 * and 90th percentile:
 * - a test file's start: startJackdaw in a new process (BENCH_FILES, default 10), timed inside it
 *   from the call to its answer, the process's own start and imports left out;
 * - startJackdaw after the first in one process (BENCH_STARTS, default 20);
 * - POST /v2/accounts (BENCH_ACCOUNTS, default 200).
 * Writes bench/TEST-CONTROL.md.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { startEmbedded } from '../src/store/embedded.js'
import { startJackdaw } from '../src/testing/index.js'
import { POSTGRES_URL_VARIABLE, THROWAWAY_SETTINGS } from '../src/testing/postgres.js'

const FILES = Number(process.env.BENCH_FILES ?? 10)
const STARTS = Number(process.env.BENCH_STARTS ?? 20)
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 200)
const ADMIN_TOKEN = 'bench-admin-token-0123456789'
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))

function summary(name: string, ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]?.toFixed(0)
  return `| ${name} | ${at(0.5)} ms | ${at(0.9)} ms | ${ms.length} |`
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-bench-testing-'))
const server = await startEmbedded(dir, { database: 'postgres', settings: THROWAWAY_SETTINGS })
process.env[POSTGRES_URL_VARIABLE] = server.url
const lines: string[] = []
try {
  // a test file: a process of its own on the run's server, as the package's users import it
  const fileStart = `
    import { performance } from 'node:perf_hooks'
    import { startJackdaw } from 'jackdaw/testing'
    const t0 = performance.now()
    const running = await startJackdaw()
    process.stdout.write(String(performance.now() - t0))
    await running.close()`
  const files: number[] = []
  for (let i = 0; i < FILES + 1; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', fileStart], {
      cwd: root,
      encoding: 'utf8',
    })
    // the run's first file makes the template every later one is cloned from
    if (i > 0) files.push(Number(out))
  }
  lines.push(summary("a test file's startJackdaw, after the run's first", files))

  const first = await startJackdaw({ adminToken: ADMIN_TOKEN })
  const starts: number[] = []
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now()
    const running = await startJackdaw()
    starts.push(performance.now() - t0)
    await running.close()
  }
  lines.push(summary('startJackdaw after the first, in one process', starts))

  const creates: number[] = []
  for (let i = 0; i < ACCOUNTS; i++) {
    const t0 = performance.now()
    const res = await fetch(`${first.url}/v2/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Shop ${i}` }),
    })
    if (res.status !== 201) throw new Error(`POST /v2/accounts answered ${res.status}`)
    await res.arrayBuffer()
    creates.push(performance.now() - t0)
  }
  lines.push(summary('POST /v2/accounts', creates))
  await first.close()
} finally {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}

const table = ['| what | median | p90 | runs |', '|---|---|---|---|', ...lines].join('\n')
process.stdout.write(`${table}\n`)
writeFileSync(
  path.join(root, 'bench', 'TEST-CONTROL.md'),
  `# Test-control timings\n\n\`npm run bench:test-control\` on ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}.\n\n${table}\n`,
)
