import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { POSTGRES_URL_VARIABLE, startJackdaw } from '../../src/testing/index.js'
import setup from '../../src/testing/vitest-setup.js'

/** jackdaw/testing/vitest-setup, as a shop's vitest.config names it in `globalSetup`. */

const runServer = process.env[POSTGRES_URL_VARIABLE]
afterEach(() => {
  process.env[POSTGRES_URL_VARIABLE] = runServer
})

async function databases(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ datname: string }>('SELECT datname FROM pg_database')).rows.map((r) => r.datname)
  } finally {
    await client.end()
  }
}

describe('jackdaw/testing/vitest-setup', () => {
  it('starts one embedded PostgreSQL for the run, its template made, and removes it at the end', async () => {
    delete process.env[POSTGRES_URL_VARIABLE]
    const teardown = await setup()
    const url = process.env[POSTGRES_URL_VARIABLE] as string
    expect(url).toMatch(/^postgresql:\/\//)
    expect(url).not.toBe(runServer)
    // the template is ready before the first file asks
    expect((await databases(url)).some((d) => d.startsWith('jackdaw_template_'))).toBe(true)
    await teardown()
    expect(process.env[POSTGRES_URL_VARIABLE]).toBeUndefined()
    await expect(databases(url)).rejects.toThrow()
  }, 60_000)

  it('starts none when the run names a server', async () => {
    const teardown = await setup()
    expect(process.env[POSTGRES_URL_VARIABLE]).toBe(runServer)
    const jackdaw = await startJackdaw()
    try {
      expect(await databases(runServer as string)).toContain(jackdaw.database)
    } finally {
      await jackdaw.close()
    }
    await teardown()
    expect(process.env[POSTGRES_URL_VARIABLE]).toBe(runServer)
  })
})
