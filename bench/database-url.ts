import { existsSync } from 'node:fs'

// A service on the same machine as its database reaches it over the Unix socket when there is one:
// on this kind of virtual machine a loopback TCP round trip costs the service about twice the CPU.
const SOCKET_DIR = '/var/run/postgresql'

/** The PostgreSQL server the benchmarks make their databases on (BENCH_DATABASE_URL overrides). */
export const BENCH_DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  (existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`)
    ? `postgres://postgres@localhost/postgres?host=${SOCKET_DIR}`
    : 'postgres://postgres@127.0.0.1:5432/postgres')
