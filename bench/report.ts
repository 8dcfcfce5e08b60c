/** The report writer: bench/RESULTS.md from a full run's figures, or the same text printed. */
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { RestingMemory } from './embedded.js'
import { type Row, share } from './load.js'
import { PARTIAL, PG_URL, REST_SECONDS, ROOT, ROUNDS, SECONDS, SERVICE_ENTRY } from './settings.js'

export interface Figures {
  sections: { title: string; rows: Row[] }[]
  /** The embedded store's start, from an empty data directory and again, in seconds: each round's. */
  starts: { empty: number[]; restart: number[] }
  resting: RestingMemory | undefined
  /** the external PostgreSQL's version and settings; undefined when it was not reachable */
  pgVersion: string | undefined
}

const table = (rows: Row[]) =>
  [
    `| operation | connections | req/s | bare route req/s | share of bare route | shares of the ${ROUNDS} rounds | p50 ms | p99 ms | non-2xx | cores: service / PostgreSQL / load |`,
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name.split(': ')[1] ?? r.name} | ${r.connections} | ${r.rps} | ${r.ceiling} | ${share(r).toFixed(1)}% | ${r.shares.map((x) => x.toFixed(1)).join(', ')} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.cpu.service} / ${r.cpu.postgres} / ${r.cpu.load} |`,
    ),
  ].join('\n')

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] ?? 0
const seconds = (xs: number[]) => `${median(xs).toFixed(2)} s (rounds: ${xs.map((x) => x.toFixed(2)).join(', ')})`

export function resultsMarkdown({ sections, starts, resting, pgVersion }: Figures): string {
  const embeddedSection = sections.find((s) => s.title.startsWith('Embedded'))
  const externalSection = sections.find((s) => s.title === 'PostgreSQL, 1 process')
  const comparison =
    embeddedSection && externalSection
      ? [
          '## The embedded default against the external PostgreSQL, 1 process',
          '',
          'The same operations of this run; the embedded rate as a share of the external one, as measured and',
          "as shares of the bare route: each rate over the bare route's run just before it, so that a machine",
          'that slowed between the two runs (the bare route then drops with it) counts against neither.',
          '',
          '| operation | connections | embedded req/s | external req/s | embedded / external | of the bare route: embedded / external | p99 ms embedded / external |',
          '|---|---|---|---|---|---|---|',
          ...embeddedSection.rows.map((e) => {
            const x = externalSection.rows.find(
              (r) => r.name.split(': ')[1] === e.name.split(': ')[1] && r.connections === e.connections,
            )
            const ratio = x?.rps ? `${((100 * e.rps) / x.rps).toFixed(0)}%` : '-'
            const shares = x?.rps ? `${((100 * share(e)) / share(x)).toFixed(0)}%` : '-'
            return `| ${e.name.split(': ')[1]} | ${e.connections} | ${e.rps} | ${x?.rps ?? '-'} | ${ratio} | ${shares} | ${e.p99} / ${x?.p99 ?? '-'} |`
          }),
        ].join('\n')
      : ''
  const startFigures = starts.empty.length
    ? [
        '## The embedded store: start and memory',
        '',
        `- From an empty data directory to the first answer (\`npm start\`'s \`node ${SERVICE_ENTRY}\`, installed and built): ${seconds(starts.empty)}`,
        `- A restart on the directory it made, to the first answer: ${seconds(starts.restart)}`,
        resting
          ? `- At rest, ${REST_SECONDS} s after the benchmark: the service ${resting.service.rssMb} MB RSS (${resting.service.processes} processes), ` +
            `PostgreSQL ${resting.postgres.rssMb} MB RSS added up over its ${resting.postgres.processes} processes (${resting.postgres.pssMb} MB PSS, shared memory counted once); ` +
            `together ${resting.service.rssMb + resting.postgres.rssMb} MB RSS added up, ${resting.service.pssMb + resting.postgres.pssMb} MB PSS` +
            (resting.togetherMb === undefined
              ? ''
              : `; resident for the two together, each physical page once (from /proc/PID/pagemap): ${resting.togetherMb} MB`)
          : '',
      ].join('\n')
    : ''

  const cpus = os.cpus()
  return `# Benchmark results

Command: \`npm run bench\` (BENCH_SECONDS=${SECONDS} per run, BENCH_ROUNDS=${ROUNDS}). Generated ${new Date().toISOString()}.

Machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory,
${os.type()} ${os.release()}, Node ${process.version}; ${pgVersion ? `${pgVersion}, reached over ${new URL(PG_URL).searchParams.get('host') ? 'its Unix socket' : 'TCP'}` : 'PostgreSQL not reachable: its runs were skipped'}.
The load generator (autocannon, in the benchmark's own process) shares the machine's cores with
the service and the database, as the bare route does.

The ceiling is a bare Fastify route returning a fixed 1 KB JSON body, run at the same number of
connections right before each run of an operation; each share is of that run's rate. Each operation
ran ${ROUNDS} times (BENCH_ROUNDS), each after its own run of the bare route; a row is the round
with the median share, and lists the shares of all rounds. The cores are those of that round.

${[startFigures, comparison, ...sections.map((s) => `## ${s.title}\n\n${table(s.rows)}`)].filter(Boolean).join('\n\n')}
`
}

/** Writes RESULTS.md, unless the run was narrowed: then it only prints the text. */
export function writeResults(md: string): void {
  if (PARTIAL) {
    process.stdout.write(`\n${md}\n`)
    process.stdout.write('a partial run (BENCH_STORES, BENCH_OPS or BENCH_CONNECTIONS): RESULTS.md left as it was\n')
  } else {
    writeFileSync(path.join(ROOT, 'bench/RESULTS.md'), md)
    process.stdout.write('wrote bench/RESULTS.md\n')
  }
}
