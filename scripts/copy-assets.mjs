// Copies what tsc does not: the SQL migrations, as they are now (a migration removed from the
// sources must not stay behind in the build, where it would still be applied).
import { cpSync, existsSync, rmSync } from 'node:fs'

for (const dir of ['store/migrations']) {
  rmSync(`dist/${dir}`, { recursive: true, force: true })
  if (existsSync(`src/${dir}`)) cpSync(`src/${dir}`, `dist/${dir}`, { recursive: true })
}
