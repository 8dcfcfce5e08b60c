import { defineConfig } from 'vitest/config'

export default defineConfig({
  // jackdaw/testing from its source, as tsconfig.json resolves it
  resolve: { conditions: ['jackdaw-source'] },
  ssr: { resolve: { conditions: ['jackdaw-source'] } },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    // one PostgreSQL for the run, and a template database each test's database is cloned from
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // each file has its own databases; two cores, so two files at a time
    pool: 'forks',
    maxWorkers: 2,
    // a worker's files share its loaded modules: loading the service anew for each file was most
    // of the run's time. A file leaves nothing behind (every mock restored, clocks put back)
    isolate: false,
  },
})
