import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { type EmbeddedServer, startEmbedded } from '../../src/store/embedded.js'
import { POSTGRES_URL_VARIABLE, THROWAWAY_SETTINGS } from '../../src/testing/postgres.js'
import { createTemplate, dropDatabase, type TestDatabase } from './database.js'

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabase: TestDatabase
  }
}

/**
 * One PostgreSQL for the whole run: the server TEST_DATABASE_URL names, or else an embedded one
 * in a directory of its own. A database migrated once serves as the template each test file's
 * databases are cloned from.
 */
export default async function setup(project: TestProject) {
  // the tests that run the service or a command as a process run its build (helpers/process.ts)
  execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: 'inherit' })
  let server: EmbeddedServer | undefined
  let dir: string | undefined
  let adminUrl = process.env.TEST_DATABASE_URL
  if (!adminUrl) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'jackdaw-test-pg-'))
    server = await startEmbedded(dir, { database: 'postgres', settings: THROWAWAY_SETTINGS })
    adminUrl = server.url
  }
  const template = await createTemplate(adminUrl)
  project.provide('testDatabase', { adminUrl, template })
  // suites that use jackdaw/testing (examples/) make their databases on this server too, rather
  // than start one of their own in each test file's process
  process.env[POSTGRES_URL_VARIABLE] = adminUrl
  return async () => {
    await dropDatabase(adminUrl, template)
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }
}
