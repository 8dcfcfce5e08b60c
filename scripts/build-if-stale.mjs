// `npm start`'s build step: builds when the build is missing or older than its sources, so that a
// restart of an unchanged checkout starts at once.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { buildState } from './build-state.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
if (buildState(root).stale) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const built = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' })
  process.exit(built.status ?? 1)
}
