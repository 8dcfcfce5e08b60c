/**
 * Figures of the embedded store that a load does not give: how long `npm start`'s service takes
 * from an empty data directory, and from one it made, to its first answer; and the memory the
 * service and its PostgreSQL hold at rest. Linux only (/proc).
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { SERVICE_ENTRY } from './settings.js'

const ROOT = path.resolve(import.meta.dirname, '..')

/** Starts the built service on `dataDir` and times it to its first answer to GET /v2/me; then stops it. */
export async function timeToFirstAnswer(dataDir: string, port: number): Promise<number> {
  const started = performance.now()
  const child = spawn(process.execPath, [SERVICE_ENTRY], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', JACKDAW_DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => child.on('exit', resolve))
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the service exited: ${out}`)
      if (performance.now() - started > 60_000) throw new Error(`no answer within 60 s: ${out}`)
      const key = /test secret key: (\S+)/.exec(out)?.[1]
      const answer = await fetch(`http://127.0.0.1:${port}/v2/me`, {
        headers: key ? { authorization: `Bearer ${key}` } : {},
      }).catch(() => undefined)
      if (answer?.status === 200) return (performance.now() - started) / 1000
      await new Promise((r) => setTimeout(r, 10))
    }
  } finally {
    child.kill('SIGTERM')
    await exited
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}

/** The processes under `roots` (them included). */
function tree(roots: number[]): number[] {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
  const found = new Set(roots)
  for (let grew = true; grew; ) {
    grew = false
    for (const pid of all) {
      const parent = parentOf(pid)
      if (!found.has(pid) && parent !== undefined && found.has(parent)) {
        found.add(pid)
        grew = true
      }
    }
  }
  return [...found]
}

/** kB of a field of /proc/PID/status or smaps_rollup */
function kb(file: string, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(file, 'utf8'))
    return m ? Number(m[1]) : 0
  } catch {
    return 0
  }
}

export interface Memory {
  /** resident memory added up over the processes: PostgreSQL's shared buffers count once per process */
  rssMb: number
  /** proportional set size: each shared page divided among the processes that map it */
  pssMb: number
  processes: number
}

function memoryOf(pids: number[]): Memory {
  const sum = (f: (pid: number) => number) => Math.round(pids.reduce((t, pid) => t + f(pid), 0) / 1024)
  return {
    rssMb: sum((pid) => kb(`/proc/${pid}/status`, 'VmRSS')),
    pssMb: sum((pid) => kb(`/proc/${pid}/smaps_rollup`, 'Pss')),
    processes: pids.length,
  }
}

/** The memory of the service (`servicePid` and its children) and of its embedded PostgreSQL. */
export function restingMemory(servicePid: number, dataDir: string): { service: Memory; postgres: Memory } {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid')
  const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined
  return {
    service: memoryOf(tree([servicePid])),
    postgres: memoryOf(postmaster ? tree([postmaster]) : []),
  }
}
