import { type ChildProcess, execFileSync, spawn } from 'node:child_process'

export interface Running {
  child: ChildProcess
  output: () => string
  /** resolves with the first match of `pattern` in the output */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  stop(signal?: NodeJS.Signals): Promise<number | null>
  exited: Promise<number | null>
}

/**
 * Runs a TypeScript entry of the project as its own process, as a user's shell would. One under
 * src/ runs as built in dist/, which the run's global setup builds when it is older than the
 * sources: a start without a TypeScript loader takes a fraction of the time; anything else
 * (a test's own fixture) runs through tsx.
 */
export function runTs(args: string[], env: Record<string, string | undefined> = {}): Running {
  const [entry, ...rest] = args
  if (entry && /^src\/.+\.ts$/.test(entry))
    return runNode([entry.replace(/^src\/(.+)\.ts$/, 'dist/$1.js'), ...rest], env)
  return runNode(['--import', 'tsx', ...args], env)
}

/** Runs Node on `args` (a built file of the project) as its own process. */
export function runNode(args: string[], env: Record<string, string | undefined> = {}): Running {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (d) => {
    out += d.toString()
  })
  child.stderr?.on('data', (d) => {
    out += d.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    child,
    exited,
    output: () => out,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now()
        const tick = () => {
          const m = out.match(pattern)
          if (m) return resolve(m)
          if (child.exitCode !== null) return reject(new Error(`exited ${child.exitCode} before ${pattern}: ${out}`))
          if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${pattern}: ${out}`))
          setTimeout(tick, 50)
        }
        tick()
      })
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
  }
}

/** Runs a command to its end; its exit code and everything it printed. */
export async function runToEnd(args: string[], env: Record<string, string | undefined> = {}) {
  const p = runTs(args, env)
  const code = await p.exited
  return { code, output: p.output() }
}

/** The PostgreSQL processes whose command line names a directory under `dir`. */
export function serversUnder(dir: string): number[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => /postgres/.test(line) && line.includes(`${dir}/`))
    .map((line) => Number.parseInt(line, 10))
}

/** Stops at once every PostgreSQL server under `dir`: those a failed test left running. */
export function stopServersUnder(dir: string): void {
  for (const pid of serversUnder(dir)) {
    try {
      process.kill(pid, 'SIGQUIT')
    } catch {}
  }
}
