import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // each file has its own store; two cores, so two files at a time
    pool: 'forks',
    maxWorkers: 2,
  },
})
