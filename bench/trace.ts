/**
 * BENCH_THREADS and BENCH_TRACE: where a request's CPU went, and the seconds in which requests
 * were slow, beside a probe of PostgreSQL's commits.
 */
import { readdirSync, readFileSync } from 'node:fs'
import type autocannon from 'autocannon'
import pg from 'pg'
import { isPostgres, isService, processes, taskCpu } from './cpu.js'

interface ThreadCounts {
  cpu: number
  slept: number
  preempted: number
}
type ThreadKind = 'main' | 'other' | 'postgres'

function threadCounts(): Record<ThreadKind, ThreadCounts> {
  const counts = {
    main: { cpu: 0, slept: 0, preempted: 0 },
    other: { cpu: 0, slept: 0, preempted: 0 },
    postgres: { cpu: 0, slept: 0, preempted: 0 },
  }
  const add = (kind: ThreadKind, dir: string) => {
    const cpu = taskCpu(dir)
    let status: string
    try {
      status = readFileSync(`${dir}/status`, 'utf8')
    } catch {
      return
    }
    if (cpu === undefined) return
    counts[kind].cpu += cpu
    counts[kind].slept += Number(status.match(/^voluntary_ctxt_switches:\s+(\d+)/m)?.[1] ?? 0)
    counts[kind].preempted += Number(status.match(/^nonvoluntary_ctxt_switches:\s+(\d+)/m)?.[1] ?? 0)
  }
  for (const pid of processes(isService)) {
    let tids: string[] = []
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {}
    for (const tid of tids) add(tid === String(pid) ? 'main' : 'other', `/proc/${pid}/task/${tid}`)
  }
  for (const pid of processes(isPostgres)) add('postgres', `/proc/${pid}`)
  return counts
}

/** The transaction id PostgreSQL hands out next: write transactions between two readings. */
async function nextTransactionId(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return Number((await c.query<{ id: string }>('SELECT txid_current()::text AS id')).rows[0]?.id)
  } finally {
    await c.end()
  }
}

export async function traceThreads(): Promise<(requests: number) => Promise<string>> {
  const before = threadCounts()
  const url = probeDatabase
  const firstId = url ? await nextTransactionId(url) : undefined
  return async (requests) => {
    const after = threadCounts()
    // the reading's own transaction is one of the ids between the two
    const writes = url && firstId !== undefined ? (await nextTransactionId(url)) - firstId - 1 : undefined
    const per = (kind: ThreadKind) => {
      const d = (k: keyof ThreadCounts) => (after[kind][k] - before[kind][k]) / requests
      return { cpu: Math.round(d('cpu') * 1e6), slept: d('slept').toFixed(2), preempted: d('preempted').toFixed(2) }
    }
    const [main, other, postgres] = [per('main'), per('other'), per('postgres')]
    const transactions = writes === undefined ? '' : `; ${(writes / requests).toFixed(3)} write transactions`
    return (
      `    a request: service's main threads ${main.cpu} µs (slept ${main.slept}, preempted ${main.preempted}), ` +
      `its other threads ${other.cpu} µs; PostgreSQL ${postgres.cpu} µs (slept ${postgres.slept}, ` +
      `preempted ${postgres.preempted})${transactions}\n`
    )
  }
}

const SLOW_MS = 25

export function traceSlowSeconds(run: autocannon.Instance): (slowestCommits?: Map<number, number>) => string {
  const seconds = new Map<number, { count: number; slow: number; max: number }>()
  run.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
    const at = Math.floor(Date.now() / 1000)
    const s = seconds.get(at) ?? { count: 0, slow: 0, max: 0 }
    s.count++
    if (ms > SLOW_MS) s.slow++
    if (ms > s.max) s.max = ms
    seconds.set(at, s)
  })
  return (slowestCommits) =>
    [...seconds]
      .filter(([, s]) => s.max > SLOW_MS)
      .map(([at, s]) => {
        const commit = slowestCommits?.get(at)
        const probe = commit === undefined ? '' : `; the probe's slowest commit ${commit.toFixed(1)} ms`
        return `    ${new Date(at * 1000).toISOString().slice(11, 19)}: ${s.count} answers, ${s.slow} over ${SLOW_MS} ms, slowest ${Math.round(s.max)} ms${probe}\n`
      })
      .join('')
}

// the database of the service under load, for the commit probe; none for the embedded store
export let probeDatabase: string | undefined
export function setProbeDatabase(url: string | undefined): void {
  probeDatabase = url
}

/**
 * A commit every 5 ms on a connection of its own, beside the load: a one-row insert into a table
 * of the benchmark's, so that each commit waits for its WAL to reach the disk as the service's do.
 * Its slowest commit in each second tells whether a slow second of the service was the database
 * waiting for the disk.
 */
export async function probeCommits(url: string): Promise<{ stop: () => Promise<Map<number, number>> }> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query('CREATE TABLE IF NOT EXISTS bench_commit_probe (at timestamptz NOT NULL DEFAULT now())')
  const slowest = new Map<number, number>()
  let running = true
  const loop = (async () => {
    while (running) {
      const at = Math.floor(Date.now() / 1000)
      const started = performance.now()
      await c.query('INSERT INTO bench_commit_probe DEFAULT VALUES')
      const ms = performance.now() - started
      if (ms > (slowest.get(at) ?? 0)) slowest.set(at, ms)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      await c.end()
      return slowest
    },
  }
}
