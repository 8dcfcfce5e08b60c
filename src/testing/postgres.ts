import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type EmbeddedServer, startEmbedded } from '../store/embedded.js'
import { databaseUrl, dropDatabase, sharedTemplate, takeDatabase } from './databases.js'

/**
 * Settings of a PostgreSQL server whose data need not outlive the test run: nothing is flushed to
 * disk, and many test databases may be open at once.
 */
export const THROWAWAY_SETTINGS = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  max_connections: 400,
} as const

/** Names a PostgreSQL server (a superuser's connection string) for test databases, instead of an embedded one. */
export const POSTGRES_URL_VARIABLE = 'JACKDAW_TESTING_POSTGRES_URL'

interface SharedServer {
  adminUrl: string
  template: string
}

let shared: Promise<SharedServer> | undefined

/**
 * The process's PostgreSQL for test databases, started at the first call and reused: the server
 * JACKDAW_TESTING_POSTGRES_URL names, or an embedded one in a temporary directory, stopped and
 * removed when the process ends. A database migrated once per server and migration set serves as
 * the template of every test database.
 */
function sharedServer(): Promise<SharedServer> {
  shared ??= (async () => {
    let adminUrl = process.env[POSTGRES_URL_VARIABLE]
    if (!adminUrl) adminUrl = (await startThrowawayServer()).url
    return { adminUrl, template: await sharedTemplate(adminUrl) }
  })()
  shared.catch(() => {
    shared = undefined
  })
  return shared
}

/**
 * An embedded server in a directory of its own, gone with the process: stopped when the process
 * runs out of work, and at the latest told to quit at once as the process exits.
 */
async function startThrowawayServer(): Promise<EmbeddedServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-testing-'))
  const server = await startEmbedded(dir, { database: 'postgres', settings: THROWAWAY_SETTINGS, unref: true })
  const remove = () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  let state: 'running' | 'stopping' | 'stopped' = 'running'
  process.once('beforeExit', async () => {
    if (state !== 'running') return
    state = 'stopping'
    // the server's connection does not keep the process alive (unref): this timer does, until the
    // stop is done, or the process would end halfway through it and leave the server running
    const hold = setInterval(() => {}, 1_000)
    await server.stop().catch(() => {})
    clearInterval(hold)
    remove()
    state = 'stopped'
  })
  // A signal whose default ends the process would end it without its 'exit' event, leaving the
  // server running. Only a process that has no other listener for it is stopped here, as the
  // signal would have stopped it: a program or test runner that listens decides for itself.
  const onSignal = (signal: NodeJS.Signals) => {
    if (state !== 'running' || process.listenerCount(signal) > 1) return
    state = 'stopping'
    const hold = setInterval(() => {}, 1_000)
    void server
      .stop()
      .catch(() => {})
      .then(() => {
        clearInterval(hold)
        try {
          remove()
        } catch {}
        state = 'stopped'
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
        process.kill(process.pid, signal)
      })
  }
  // first of the listeners: a program's own `once` listener is taken off as it is called, and would
  // not be counted by a listener that ran after it
  process.prependListener('SIGINT', onSignal)
  process.prependListener('SIGTERM', onSignal)
  process.once('exit', () => {
    if (state === 'stopped') return
    try {
      // synchronous here: the server's own process is asked to quit at once; its files go with it
      const pid = Number(readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0])
      process.kill(pid, 'SIGQUIT')
    } catch {}
    try {
      remove()
    } catch {}
  })
  return server
}

/**
 * A fresh, migrated database on the process's PostgreSQL, and how to drop it (which waits for
 * the spare its taking began, so that no copy is cut off when the process ends).
 */
export async function freshDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const { adminUrl, template } = await sharedServer()
  const { name, spare } = await takeDatabase(adminUrl, template)
  return {
    name,
    url: databaseUrl(adminUrl, name),
    drop: async () => {
      await spare
      await dropDatabase(adminUrl, name)
    },
  }
}
