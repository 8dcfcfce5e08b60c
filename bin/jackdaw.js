#!/usr/bin/env node
// Runs the built command line (dist/cli.js), building it first when it is missing or older than
// the sources, so that `npx jackdaw` works after `npm start` or a checkout with no separate step.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildState } from '../scripts/build-state.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const cli = new URL('../dist/cli.js', import.meta.url)

const { builtAt, stale } = buildState(root)
const canBuild = existsSync(`${root}node_modules/typescript`)
if (stale && canBuild) {
  process.stderr.write(`jackdaw: ${builtAt ? 'the sources changed' : 'not built yet'}; building…\n`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const built = spawnSync(npm, ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 2, 2] })
  if (built.status !== 0) {
    process.stderr.write('jackdaw: the build failed (above)\n')
    process.exit(1)
  }
} else if (!builtAt) {
  process.stderr.write('jackdaw: not built yet; run `npm install` and `npm run build` (or `npm start`) first\n')
  process.exit(1)
}
await import(cli.href)
