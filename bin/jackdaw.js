#!/usr/bin/env node
import { existsSync } from 'node:fs'

const cli = new URL('../dist/cli.js', import.meta.url)
if (!existsSync(cli)) {
  process.stderr.write('jackdaw: not built yet; run `npm run build` (or `npm start`) first\n')
  process.exit(1)
}
await import(cli.href)
