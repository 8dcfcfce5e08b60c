// Whether the build in dist/ is older than what it is built from, for the commands that build only
// when they must (`npm start`'s prestart, `npx jackdaw`): the sources, the dashboard, the build's own
// scripts and settings, and the packages package.json asks for (not package-lock.json, which every
// `npm install` writes again).
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'

const INPUTS = ['src', 'dashboard', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json']
/** the build's outputs: it is as old as the oldest of them */
const OUTPUTS = ['dist/cli.js', 'dist/service.mjs', 'dist/dashboard/app.js']

/** The newest modification time of a file, or of the files under a folder; 0 if there is none. */
function newest(file) {
  if (!existsSync(file)) return 0
  const stat = statSync(file)
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = 0
  for (const entry of readdirSync(file, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return latest
}

/** When the build in `root` was made (0 when it is missing or incomplete), and whether it is stale. */
export function buildState(root) {
  const builtAt = Math.min(
    ...OUTPUTS.map((f) => (existsSync(path.join(root, f)) ? statSync(path.join(root, f)).mtimeMs : 0)),
  )
  const sourcesAt = Math.max(...INPUTS.map((f) => newest(path.join(root, f))))
  return { builtAt, stale: builtAt < sourcesAt }
}
