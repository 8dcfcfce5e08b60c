/**
 * `node --conditions=jackdaw-source --import tsx bench/test-control.ts`: how long a test suite
 * waits on Jackdaw's test-control plane. Starts jackdaw/testing (one embedded PostgreSQL for the
 * process), then measures startJackdaw after the first, and POST /v2/accounts, each as the median
 * and 90th percentile of BENCH_STARTS (default 20) and BENCH_ACCOUNTS (default 200) sequential runs.
 */
import { performance } from 'node:perf_hooks'
import { startJackdaw } from '../src/testing/index.js'

const STARTS = Number(process.env.BENCH_STARTS ?? 20)
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 200)
const ADMIN_TOKEN = 'bench-admin-token-0123456789'

function summary(name: string, ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]?.toFixed(1)
  return `${name}: median ${at(0.5)} ms, p90 ${at(0.9)} ms (${ms.length} runs)`
}

const firstStarted = performance.now()
const first = await startJackdaw({ adminToken: ADMIN_TOKEN })
process.stdout.write(`first startJackdaw (starts PostgreSQL): ${(performance.now() - firstStarted).toFixed(0)} ms\n`)

const starts: number[] = []
for (let i = 0; i < STARTS; i++) {
  const t0 = performance.now()
  const running = await startJackdaw()
  starts.push(performance.now() - t0)
  await running.close()
}
process.stdout.write(`${summary('startJackdaw after the first', starts)}\n`)

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
process.stdout.write(`${summary('POST /v2/accounts', creates)}\n`)
await first.close()
