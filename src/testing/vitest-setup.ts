/**
 * `jackdaw/testing/vitest-setup`: a Vitest `globalSetup` that starts one embedded PostgreSQL for
 * the whole run, so that every test file's startJackdaw clones its database there instead of
 * starting a server of its own, and makes the template and the first clones ready. Stopped and removed when the run ends. A run given
 * JACKDAW_TESTING_POSTGRES_URL uses that server and starts none.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startEmbedded } from '../store/embedded.js'
import { makeSpare, sharedTemplate } from './databases.js'
import { POSTGRES_URL_VARIABLE, THROWAWAY_SETTINGS } from './postgres.js'

export default async function setup(): Promise<() => Promise<void>> {
  if (process.env[POSTGRES_URL_VARIABLE]) return async () => {}
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-testing-run-'))
  const server = await startEmbedded(dir, { database: 'postgres', settings: THROWAWAY_SETTINGS })
  // the test files' processes inherit it
  process.env[POSTGRES_URL_VARIABLE] = server.url
  const template = await sharedTemplate(server.url)
  // the first test files find their databases ready
  await makeSpare(server.url, template)
  await makeSpare(server.url, template)
  return async () => {
    delete process.env[POSTGRES_URL_VARIABLE]
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
