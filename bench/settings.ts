/**
 * What `npm run bench` reads from its environment (bench/run.ts checks BENCH_ROUNDS after a
 * `--compare` run has had its turn).
 */
import path from 'node:path'
import { BENCH_DATABASE_URL } from './database-url.js'

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
// Each measured run follows an unmeasured one of the same load: a process that has just started
// spends its first seconds compiling hot code and opening its pool's connections, and a run that
// counts them measures the start, not the service (a cold run is markedly slower than the runs
// right after it).
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
// Each operation is measured BENCH_ROUNDS times, each time right after the bare route, and the
// round with the median share is reported with the range of all, so that one lucky or unlucky pair
// of runs neither makes nor breaks a figure.
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
export const PG_URL = BENCH_DATABASE_URL
export const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number)
// BENCH_STORES (embedded, pg1, pg2) and BENCH_OPS (source, charge, list, retrieve, update) narrow a
// run while working on one path; RESULTS.md is written only by a full run.
export const STORES = process.env.BENCH_STORES?.split(',')
export const OPS = process.env.BENCH_OPS?.split(',')
export const PARTIAL = STORES !== undefined || OPS !== undefined || process.env.BENCH_CONNECTIONS !== undefined
export const wanted = (op: string) => !OPS || OPS.includes(op)
export const ROOT = path.resolve(import.meta.dirname, '..')

// Node flags for the service's processes, to profile them (`--cpu-prof --cpu-prof-dir=DIR`)
export const SERVICE_NODE_ARGS = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []
// where the services' own output goes as well (`--trace-gc` in BENCH_SERVICE_NODE_ARGS, say)
export const SERVICE_OUTPUT = process.env.BENCH_SERVICE_OUTPUT

// BENCH_THREADS=1 prints, for each measured run, where a request's CPU went: the service's main
// threads, its other threads and PostgreSQL's processes, with how often each kind slept (voluntary
// context switches) and was preempted, and on PostgreSQL the write transactions a request
export const THREADS = process.env.BENCH_THREADS === '1'

// BENCH_TRACE=1 prints, for each measured run, every second in which a request took over 25 ms, with
// the clock time, to line up a run's slow tail with what the machine did at that second, and on
// PostgreSQL the slowest commit of a probe beside the load in that second
export const TRACE = process.env.BENCH_TRACE === '1'

// how long the embedded service rests after its runs before its memory is read: V8 gives back the
// heap a load grew only once the process has been idle a while, and PostgreSQL's backends that the
// load opened close after the pool's idle timeout
export const REST_SECONDS = Number(process.env.BENCH_REST_SECONDS ?? 30)

// what `npm start` runs: the service's bundle (scripts/bundle-service.mjs)
export const SERVICE_ENTRY = 'dist/service.mjs'
