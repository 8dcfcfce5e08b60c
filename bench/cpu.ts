/** CPU time of the benchmark's processes, read from /proc (Linux only). */
import { readdirSync, readFileSync } from 'node:fs'

/** The processes whose command line matches, by pid, from /proc (Linux only). */
export function processes(match: (cmdline: string, pid: number) => boolean): number[] {
  let pids: string[] = []
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    return []
  }
  return pids.map(Number).filter((pid) => {
    try {
      return match(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '), pid)
    } catch {
      return false // the process ended while being read
    }
  })
}

/** CPU seconds so far of a process or thread (`/proc/PID` or `/proc/PID/task/TID`). */
export function taskCpu(dir: string): number | undefined {
  try {
    const stat = readFileSync(`${dir}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined // it ended while being read
  }
}

/** CPU seconds so far of each process whose command line matches, by pid. */
export function cpuSeconds(match: (cmdline: string, pid: number) => boolean): Map<number, number> {
  const seconds = new Map<number, number>()
  for (const pid of processes(match)) {
    const cpu = taskCpu(`/proc/${pid}`)
    if (cpu !== undefined) seconds.set(pid, cpu)
  }
  return seconds
}

/**
 * CPU seconds used between two readings: by the processes alive at the second, from the first
 * reading or from their start. A process that exits meanwhile (an idle database connection
 * closed) takes its time with it and is left out, rather than counted as time given back.
 */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, s] of after) total += s - (before.get(pid) ?? 0)
  return total
}

/** The pids of the service under load: its own process's, from its start until the next. */
let servicePids = new Set<number>()
export function watchService(pid: number | undefined): void {
  servicePids = new Set(pid === undefined ? [] : [pid])
}
export const serviceCpu = () => cpuSeconds(isService)
const childOf = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return servicePids.has(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
  } catch {
    return false
  }
}
export const isService = (_: string, pid: number) => servicePids.has(pid) || childOf(pid)
// backends name themselves `postgres: …`; a server is its binary's path, with -D
export const isPostgres = (cmd: string) => cmd.startsWith('postgres') || /\/postgres -D /.test(cmd)
export const postgresCpu = () => cpuSeconds(isPostgres)
export const loadCpu = () => {
  const u = process.cpuUsage()
  return new Map([[process.pid, (u.user + u.system) / 1e6]])
}
