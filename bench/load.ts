/**
 * The load driver: autocannon on one operation at a time, each run after an unmeasured warm-up and
 * right after a run of the bare route at the same connections, with the cores each side used.
 */
import autocannon from 'autocannon'
import { cpuBetween, loadCpu, postgresCpu, serviceCpu } from './cpu.js'
import { api, type Server } from './servers.js'
import { CONNECTIONS, ROUNDS, SECONDS, THREADS, TRACE, WARMUP_SECONDS, wanted } from './settings.js'
import { probeCommits, probeDatabase, traceSlowSeconds, traceThreads } from './trace.js'

export interface Row {
  name: string
  connections: number
  rps: number
  p50: number
  p99: number
  non2xx: number
  /** cores used during the run by the service's processes, by PostgreSQL, by the load generator */
  cpu: { service: number; postgres: number; load: number }
  /** the bare route's rate at the same connections, measured right before */
  ceiling: number
  /** the share of every round, lowest first */
  shares: number[]
}

async function loadOnce(
  name: string,
  url: string,
  connections: number,
  opts: Partial<autocannon.Options> = {},
): Promise<Row> {
  if (WARMUP_SECONDS > 0) await autocannon({ url, connections, duration: WARMUP_SECONDS, pipelining: 1, ...opts })
  const before = [serviceCpu(), postgresCpu(), loadCpu()] as const
  const started = performance.now()
  // without a callback autocannon answers with its run, an emitter that is also a promise of the result
  const run = autocannon({
    url,
    connections,
    duration: SECONDS,
    pipelining: 1,
    ...opts,
  }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>
  // the ceiling is never traced: tracing costs the load generator a little on every answer
  const measured = name !== 'bare route'
  const traced = TRACE && measured
  const slow = traced ? traceSlowSeconds(run) : undefined
  const threads = THREADS && measured ? await traceThreads() : undefined
  const commits = traced && probeDatabase ? await probeCommits(probeDatabase) : undefined
  const result = await run
  const slowestCommits = await commits?.stop()
  const wall = (performance.now() - started) / 1000
  const after = [serviceCpu(), postgresCpu(), loadCpu()] as const
  const cores = (i: 0 | 1 | 2) => Math.round((100 * cpuBetween(before[i], after[i])) / wall) / 100
  const row = {
    cpu: { service: cores(0), postgres: cores(1), load: cores(2) },
    name,
    connections,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
    ceiling: 0,
    shares: [],
  }
  if (slow) process.stdout.write(slow(slowestCommits))
  if (threads) process.stdout.write(await threads(result.requests.total))
  process.stdout.write(
    `  ${name} @${connections}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, non-2xx ${row.non2xx}, ` +
      `cores: service ${row.cpu.service}, postgres ${row.cpu.postgres}, load ${row.cpu.load}\n`,
  )
  return row
}

export const share = (r: Row) => (100 * r.rps) / r.ceiling

const CARD = { name: 'Bench Payer', number: '4242424242424242', exp_month: '12', exp_year: '2035', cvc: '123' }

/**
 * The machine's speed drifts within minutes (a section's ceiling has been half the next one's), so
 * each run of an operation follows a run of the bare route at the same connections, and its share
 * is of that: the two see the machine as it is at that moment.
 */
export async function measureService(label: string, s: Server, bareUrl: string): Promise<Row[]> {
  const rows: Row[] = []
  const load = async (...args: Parameters<typeof loadOnce>): Promise<Row> => {
    const rounds: Row[] = []
    for (let i = 0; i < ROUNDS; i++) {
      const bare = await loadOnce('bare route', bareUrl, args[2])
      const row = { ...(await loadOnce(...args)), ceiling: bare.rps }
      process.stdout.write(`    ${share(row).toFixed(1)}% of the bare route\n`)
      rounds.push(row)
    }
    rounds.sort((a, b) => share(a) - share(b))
    const median = rounds[(rounds.length - 1) >> 1] as Row
    return { ...median, shares: rounds.map(share) }
  }
  const auth = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }
  const sourceBody = JSON.stringify({ type: 'card', card: CARD })
  // reads and updates go round a hundred customers, as a shop's traffic would; one customer
  // updated by every connection at once would measure waiting on one row's lock instead
  const customers: string[] = []
  for (let i = 0; i < 100; i++) {
    customers.push(
      (await api(s, 'POST', '/v2/customers/', { email: `bench${i}@example.com`, description: 'Bench' })).id,
    )
  }
  let turn = 0
  const nextCustomer = () => `/v2/customers/${customers[turn++ % customers.length]}`
  for (let i = 0; i < 25; i++) {
    const src = await api(s, 'POST', '/v2/sources/', { type: 'card', card: CARD })
    await api(s, 'POST', '/v2/charges/', { amount: 1000, currency: 'usd', source: src.id })
  }
  const fresh: string[] = []
  // the charge runs consume the sources made here, so they run for charges as well
  if (wanted('source') || wanted('charge'))
    for (const c of CONNECTIONS) {
      const row = await load(`${label}: create source`, `${s.url}/v2/sources/`, c, {
        method: 'POST',
        headers: auth,
        body: sourceBody,
        // the sources made here are the fresh ones the charge runs consume
        requests: [
          {
            onResponse: (status: number, body: string) => {
              if (status === 200) fresh.push(JSON.parse(body).id)
            },
          },
        ],
      } as unknown as Partial<autocannon.Options>)
      if (wanted('source')) rows.push(row)
    }
  if (wanted('charge'))
    for (const c of CONNECTIONS) {
      rows.push(
        await load(`${label}: create charge`, `${s.url}/v2/charges/`, c, {
          method: 'POST',
          headers: auth,
          requests: [
            {
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                body: JSON.stringify({ amount: 1000, currency: 'usd', source: fresh.pop() ?? 'src_none' }),
              }),
            },
          ],
        } as unknown as Partial<autocannon.Options>),
      )
    }
  if (wanted('list'))
    for (const c of CONNECTIONS) {
      rows.push(await load(`${label}: list charges`, `${s.url}/v2/charges/?limit=20`, c, { headers: auth }))
    }
  if (wanted('retrieve'))
    for (const c of CONNECTIONS) {
      rows.push(
        await load(`${label}: retrieve customer`, `${s.url}${nextCustomer()}`, c, {
          headers: auth,
          requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: nextCustomer() }) }],
        } as unknown as Partial<autocannon.Options>),
      )
    }
  let n = 0
  if (wanted('update'))
    for (const c of CONNECTIONS) {
      rows.push(
        await load(`${label}: update customer`, `${s.url}${nextCustomer()}`, c, {
          method: 'PUT',
          headers: auth,
          requests: [
            {
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                path: nextCustomer(),
                body: JSON.stringify({ description: `Bench customer ${n++}`, metadata: { n } }),
              }),
            },
          ],
        } as unknown as Partial<autocannon.Options>),
      )
    }
  return rows
}
