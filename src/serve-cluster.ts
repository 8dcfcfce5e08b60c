import cluster from 'node:cluster'
import os from 'node:os'
import type { Config } from './config.js'
import { loadOrCreateKeyFile } from './crypto/vault.js'
import { makeLogger } from './logger.js'
import { adminTokenOf, banner, defaultAccount, serve, serverLost, type TestKeys } from './main.js'
import { liveProcessorOf } from './processor/live.js'
import { openStore } from './store/open.js'

/**
 * The Node flags of the processes `serve --workers N` starts. With as many processes as cores or
 * more, each one's garbage collector works on its own thread only: helper threads would compete
 * with the other processes for cores those already fill. The operator's own choice among
 * Node's flags (`--single-threaded-gc`, `--no-single-threaded-gc`, `--single-threaded`) stands.
 */
export function workerExecArgv(execArgv: readonly string[], workers: number, cores: number): string[] {
  const chosen = execArgv.some((flag) => /single[-_]threaded/.test(flag))
  return chosen || workers < cores ? [...execArgv] : [...execArgv, '--single-threaded-gc']
}

/**
 * N API processes on one port (node cluster), all on one PostgreSQL. The primary migrates and
 * makes the default account first, so the workers never race to do it; a worker that dies is
 * replaced. On the embedded store the primary owns the server, and the workers reach it as they
 * would an external one.
 */
export async function serveCluster(config: Config, workers: number) {
  if (!cluster.isPrimary) {
    await serve(config, { quiet: true })
    return
  }
  liveProcessorOf(config)
  const store = await openStore(config, { onServerLost: serverLost(makeLogger(config)) })
  let keys: TestKeys | undefined
  let admin: ReturnType<typeof adminTokenOf>
  let workerEnv: Record<string, string | undefined> | undefined
  try {
    keys = await defaultAccount(config, store)
    admin = adminTokenOf(config, store)
    workerEnv = store.embedded
      ? {
          DATABASE_URL: store.embedded.url,
          JACKDAW_ADMIN_TOKEN: admin?.token,
          JACKDAW_ENCRYPTION_KEY:
            config.JACKDAW_ENCRYPTION_KEY ?? loadOrCreateKeyFile(config.JACKDAW_DATA_DIR).toString('base64'),
        }
      : undefined
  } catch (err) {
    await store.db.close().catch(() => {})
    throw err
  }
  if (!store.embedded) await store.db.close()
  let stopping = false
  let announced = false
  let listening = 0
  const restarts: number[] = []
  cluster.setupPrimary({
    execArgv: workerExecArgv(process.execArgv, workers, os.availableParallelism()),
  })
  for (let i = 0; i < workers; i++) cluster.fork(workerEnv)
  cluster.on('listening', (_worker, addr) => {
    listening += 1
    if (!announced && listening >= workers) {
      announced = true
      const host = addr.address && addr.address !== '::' ? addr.address : config.HOST
      process.stdout.write(banner(config, `http://${host}:${addr.port}`, store, keys, workers, admin))
    }
  })
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return
    const ended = `process ${worker.process.pid} ended (${signal ?? code})`
    // a process that cannot start (the port in use, a bad HOST) fails the same way every time:
    // the service stops, its reason printed above by the process itself, rather than fork forever
    const now = Date.now()
    restarts.push(now)
    while (restarts.length > 0 && (restarts[0] as number) < now - RESTART_WINDOW_MS) restarts.shift()
    if (listening === 0 || restarts.length > MAX_RESTARTS) {
      const why = listening === 0 ? ' before any was listening' : `, the ${restarts.length}th within a minute`
      process.stderr.write(`jackdaw: ${ended}${why}; stopping\n`)
      stop(1)
      return
    }
    process.stderr.write(`jackdaw: ${ended}; starting another\n`)
    cluster.fork(workerEnv)
  })
  const stop = (exitCode = 0) => {
    if (stopping) return
    stopping = true
    // the embedded server stops once the workers have finished with it
    let finishing = false
    const done = async () => {
      if (finishing) return
      finishing = true
      if (store.embedded) await store.db.close().catch(() => {})
      process.exit(exitCode)
    }
    const live = () => Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead())
    // each process finishes the requests under way, however long their processor takes; a second
    // signal stops the workers at once
    for (const w of live()) w?.process.kill('SIGTERM')
    const force = () => {
      for (const w of live()) w?.process.kill('SIGKILL')
      void done()
    }
    process.once('SIGINT', force)
    process.once('SIGTERM', force)
    cluster.on('exit', () => {
      if (live().length === 0) void done()
    })
    if (live().length === 0) void done()
  }
  process.once('SIGINT', () => stop())
  process.once('SIGTERM', () => stop())
}

/** More processes than this ending within RESTART_WINDOW_MS stop the service: they cannot run. */
const MAX_RESTARTS = 10
const RESTART_WINDOW_MS = 60_000
