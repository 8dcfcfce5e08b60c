// Bundles the dashboard (dashboard/main.tsx) into dist/dashboard/app.js and app.css, the files
// /dashboard serves. Part of `npm run build`; the browser tests need it built too.
import { build } from 'esbuild'

await build({
  entryPoints: { app: 'dashboard/main.tsx' },
  outdir: 'dist/dashboard',
  bundle: true,
  format: 'esm',
  minify: true,
  sourcemap: false,
  target: ['chrome110', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
})
