#!/usr/bin/env node
// Runs the built command line (dist/cli.js), building it first when it is missing or older than
// the sources, so that `npx jackdaw` works after `npm start` or a checkout with no separate step.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const cli = new URL('../dist/cli.js', import.meta.url)

/** The newest modification time of the files under a folder of the package, 0 if it has none. */
function newest(dir) {
  const path = `${root}${dir}`
  if (!existsSync(path)) return 0
  let latest = 0
  for (const entry of readdirSync(path, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs)
  }
  return latest
}

const builtAt = existsSync(cli) ? statSync(cli).mtimeMs : 0
const canBuild = existsSync(`${root}node_modules/typescript`)
const stale = builtAt < Math.max(newest('src'), newest('dashboard'))
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
