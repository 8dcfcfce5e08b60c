// Copies what tsc does not: the SQL migrations.
import { cpSync, existsSync } from 'node:fs'

for (const dir of ['store/migrations']) {
  if (existsSync(`src/${dir}`)) cpSync(`src/${dir}`, `dist/${dir}`, { recursive: true })
}
