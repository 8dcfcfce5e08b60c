/**
 * Figures of the embedded store that a load does not give: how long `npm start`'s service takes
 * from an empty data directory, and from one it made, to its first answer; and the memory the
 * service and its PostgreSQL hold at rest. Linux only (/proc).
 */
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs'
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

const PAGE = 4096
const PRESENT = 1n << 63n
const PFN = (1n << 55n) - 1n

/**
 * The physical pages resident in a process's memory, read from /proc/PID/pagemap (page frame
 * numbers need root); undefined where they cannot be read.
 */
function residentPages(pid: number): Set<bigint> | undefined {
  const pages = new Set<bigint>()
  let fd: number
  try {
    fd = openSync(`/proc/${pid}/pagemap`, 'r')
  } catch {
    return undefined
  }
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+)/.exec(line)
      if (!m || line.endsWith('[vsyscall]')) continue
      const first = Number.parseInt(m[1] as string, 16) / PAGE
      const count = (Number.parseInt(m[2] as string, 16) - Number.parseInt(m[1] as string, 16)) / PAGE
      const buf = Buffer.alloc(8 * Math.min(count, 65536))
      for (let done = 0; done < count; ) {
        const n = Math.min(count - done, 65536)
        const read = readSync(fd, buf, 0, 8 * n, (first + done) * 8)
        for (let i = 0; i < read / 8; i++) {
          const entry = buf.readBigUInt64LE(i * 8)
          if (entry & PRESENT) pages.add(entry & PFN)
        }
        done += n
      }
    }
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
  // without root the frame numbers read as zero: nothing can be told apart
  return pages.size > 0 && !(pages.size === 1 && pages.has(0n)) ? pages : undefined
}

/**
 * The memory resident for all of `pids` together, each physical page counted once: PostgreSQL's
 * processes all map its shared buffers, which RSS counts again in every one of them.
 */
function residentTogether(pids: number[]): number | undefined {
  const all = new Set<bigint>()
  for (const pid of pids) {
    const pages = residentPages(pid)
    if (!pages) return undefined
    for (const p of pages) all.add(p)
  }
  return Math.round((all.size * PAGE) / (1024 * 1024))
}

export interface RestingMemory {
  service: Memory
  postgres: Memory
  /** MB resident for the service and its PostgreSQL together, each page once; undefined without root */
  togetherMb: number | undefined
}

/** The memory of the service (`servicePid` and its children) and of its embedded PostgreSQL. */
export function restingMemory(servicePid: number, dataDir: string): RestingMemory {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid')
  const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined
  // the service starts its server as a child of its own: the server's processes are counted apart
  const postgres = postmaster ? tree([postmaster]) : []
  const service = tree([servicePid]).filter((pid) => !postgres.includes(pid))
  return {
    service: memoryOf(service),
    postgres: memoryOf(postgres),
    togetherMb: residentTogether([...service, ...postgres]),
  }
}
