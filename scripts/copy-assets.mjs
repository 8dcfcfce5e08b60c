// Copies what tsc does not: the SQL migrations and the hosted pages' templates.
import { cpSync, existsSync } from 'node:fs'

for (const dir of ['store/migrations', 'http/pages']) {
  if (existsSync(`src/${dir}`)) cpSync(`src/${dir}`, `dist/${dir}`, { recursive: true })
}
