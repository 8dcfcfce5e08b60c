/**
 * `npm run bench`: starts the service (the embedded PostgreSQL; an external PostgreSQL with 1 and
 * 2 processes) and a bare Fastify route, loads each with autocannon at 10 and 50 connections, and
 * writes the numbers to bench/RESULTS.md, with the embedded store's start times and its memory at
 * rest. BENCH_SECONDS sets the length of each run (default 5).
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { restingMemory, timeToFirstAnswer } from './embedded.js'
import { measureService } from './load.js'
import { type Figures, resultsMarkdown, writeResults } from './report.js'
import { freshDatabase, postgresAvailable, start, startBare, stop } from './servers.js'
import { REST_SECONDS, ROUNDS, SERVICE_ENTRY, STORES } from './settings.js'
import { setProbeDatabase } from './trace.js'

// `npm run bench -- --compare <ref>` (or BENCH_COMPARE_REF): this tree beside another git ref
if (process.argv.includes('--compare') || process.env.BENCH_COMPARE_REF) await import('./compare.js')
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('BENCH_ROUNDS must be a whole number, 1 or more')

const sections: Figures['sections'] = []

/** The embedded store's start, from an empty data directory and again, in seconds: each round's. */
const starts = { empty: [] as number[], restart: [] as number[] }
let resting: Figures['resting']

if (!STORES || STORES.includes('embedded')) {
  for (let i = 0; i < ROUNDS; i++) {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-bench-start-'))
    starts.empty.push(await timeToFirstAnswer(empty, 18110))
    starts.restart.push(await timeToFirstAnswer(empty, 18110))
    rmSync(empty, { recursive: true, force: true })
    process.stdout.write(
      `  embedded start: empty ${starts.empty.at(-1)?.toFixed(2)} s, restart ${starts.restart.at(-1)?.toFixed(2)} s\n`,
    )
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-bench-'))
  const bare = await startBare()
  // as `npm start` runs it: one process, owning its server
  const s = await start([SERVICE_ENTRY], { JACKDAW_DATA_DIR: dataDir, PORT: '18100' })
  sections.push({
    title: 'Embedded PostgreSQL (the default), 1 process',
    rows: await measureService('embedded', s, `${bare.url}/bare`),
  })
  // at rest: the pools' idle connections closed, the last writes checkpointed in time
  await new Promise((r) => setTimeout(r, REST_SECONDS * 1000))
  resting = restingMemory(s.child.pid as number, dataDir)
  process.stdout.write(`  at rest: ${JSON.stringify(resting)}\n`)
  await stop(s)
  await stop(bare)
  rmSync(dataDir, { recursive: true, force: true })
}

const pgVersion = await postgresAvailable()
if (pgVersion) {
  for (const workers of [1, 2]) {
    if (STORES && !STORES.includes(`pg${workers}`)) continue
    const bare = await startBare()
    const db = await freshDatabase()
    const s = await start(['dist/cli.js', 'serve', '--workers', String(workers)], {
      DATABASE_URL: db.url,
      JACKDAW_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PORT: String(18100 + workers),
      DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE ?? '20',
    })
    setProbeDatabase(db.url)
    sections.push({
      title: `PostgreSQL, ${workers} process${workers > 1 ? 'es' : ''}`,
      rows: await measureService(`postgres x${workers}`, s, `${bare.url}/bare`),
    })
    setProbeDatabase(undefined)
    await stop(s)
    await stop(bare)
    await db.drop()
  }
}

writeResults(resultsMarkdown({ sections, starts, resting, pgVersion }))
process.exit(0)
