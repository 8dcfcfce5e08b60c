import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runNode } from '../helpers/process.js'

/**
 * What the package gives its users: `npx jackdaw` (bin/jackdaw.js), which builds itself when its
 * build is missing or older than the sources, and `jackdaw/client`, importable and typed.
 */

const run = (args: string[], cwd = process.cwd()) => {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 180_000 })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

const COMMANDS = [
  'serve',
  'account create',
  'account roll-key',
  'webhook-secret roll',
  'deliveries redeliver',
  'processor',
  'listen',
]

// first in this file: the command line's test below builds again, rewriting the bundle
describe('npm start: the service in one bundle (dist/service.mjs)', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'jackdaw-bundle-'))
  // the server's account (the service runs as root here) passes through to the data directory
  chmodSync(root, 0o711)
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('starts on an empty data directory, migrates, serves the API, its pages and files, and stops', async () => {
    const service = runNode(['dist/service.mjs'], {
      JACKDAW_DATA_DIR: path.join(root, 'data'),
      PORT: '0',
      DATABASE_URL: undefined,
      JACKDAW_ENCRYPTION_KEY: undefined,
    })
    try {
      const [, base] = await service.waitFor(/listening on (http:\/\/\S+)/, 60_000)
      const [, sk] = await service.waitFor(/test secret key: (sk_test_\S+)/)
      const [, dashboard] = await service.waitFor(/dashboard: (http:\/\/\S+)/)
      expect(dashboard).toBe(`${base}/dashboard`)
      const headers = { authorization: `Bearer ${sk}`, 'content-type': 'application/json' }
      const source = await fetch(`${base}/v2/sources/`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          type: 'card',
          card: { name: 'Ann Payer', number: '4242424242424242', exp_month: '12', exp_year: '2035', cvc: '123' },
        }),
      })
      expect(source.status).toBe(200)
      const charge = await fetch(`${base}/v2/charges/`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ amount: 1500, currency: 'usd', source: ((await source.json()) as { id: string }).id }),
      })
      expect(charge.status).toBe(201)
      expect(((await charge.json()) as { status: string }).status).toBe('succeeded')
      // files found beside the modules that serve them: the dashboard's bundle, the API reference
      const page = await fetch(`${base}/dashboard/app.js`)
      expect(page.status).toBe(200)
      expect((await page.text()).length).toBeGreaterThan(1000)
      expect((await fetch(`${base}/v2/docs/`)).status).toBe(200)
      expect((await fetch(`${base}/v2/openapi.json`)).status).toBe(200)
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0)
    }
  }, 120_000)
})

describe('npx jackdaw', () => {
  it('--help lists every command', () => {
    const help = run(['bin/jackdaw.js', '--help'])
    expect(help.code).toBe(0)
    for (const c of COMMANDS) expect(help.out).toContain(`  ${c}`)
  })

  it('builds first when the build is older than the sources, then runs', () => {
    const cli = path.resolve('dist/cli.js')
    utimesSync(cli, new Date('2001-01-01'), new Date('2001-01-01'))
    const help = run(['bin/jackdaw.js', 'listen', '--help'])
    expect(help.err).toMatch(/the sources changed; building/)
    expect(help.code).toBe(0)
    expect(help.out).toMatch(/Usage: jackdaw listen --forward-to URL/)
    expect(statSync(cli).mtimeMs).toBeGreaterThan(Date.now() - 600_000)
    // built now: the next run starts at once
    expect(run(['bin/jackdaw.js', '--help']).err).toBe('')
  }, 240_000)
})

describe("npm start's build step", () => {
  it('builds when a source, the dashboard, a build script or package.json is newer than the build, and not otherwise', async () => {
    // @ts-expect-error: a script of the build, in plain JavaScript
    const { buildState } = await import('../../scripts/build-state.mjs')
    const root = mkdtempSync(path.join(tmpdir(), 'jackdaw-build-'))
    try {
      const at = (file: string, time: string) => {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
        writeFileSync(path.join(root, file), '')
        utimesSync(path.join(root, file), new Date(time), new Date(time))
      }
      for (const input of ['src/a.ts', 'dashboard/b.tsx', 'scripts/c.mjs', 'package.json', 'package-lock.json'])
        at(input, '2026-01-01')
      expect(buildState(root)).toMatchObject({ builtAt: 0, stale: true })
      for (const output of ['dist/cli.js', 'dist/service.mjs', 'dist/dashboard/app.js']) at(output, '2026-02-01')
      expect(buildState(root).stale).toBe(false)
      // every npm install writes package-lock.json again: it is not a source
      at('package-lock.json', '2026-03-01')
      expect(buildState(root).stale).toBe(false)
      for (const input of ['src/deep/d.ts', 'dashboard/b.tsx', 'scripts/c.mjs', 'package.json']) {
        at(input, '2026-03-01')
        expect(buildState(root).stale, input).toBe(true)
        at(input, '2026-01-01')
      }
      // an output missing (a build stopped halfway) makes it stale too
      rmSync(path.join(root, 'dist/service.mjs'))
      expect(buildState(root).stale).toBe(true)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('jackdaw/client', () => {
  const dir = path.resolve('.scratch/client-consumer')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('is the package export, with the client, its errors and the signature verifier', () => {
    const listed = run([
      '--input-type=module',
      '-e',
      "const c = await import('jackdaw/client'); console.log(Object.keys(c).sort().join(' '))",
    ])
    expect(listed.err).toBe('')
    expect(listed.out.trim().split(' ')).toEqual(
      expect.arrayContaining(['createClient', 'JackdawError', 'JackdawConnectionError', 'verifySignature', 'sign']),
    )
  })

  it("is typed by the service's schemas: a TypeScript consumer gets its mistakes refused", () => {
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
        },
        files: ['good.ts', 'bad.ts'],
      }),
    )
    writeFileSync(
      path.join(dir, 'good.ts'),
      `import { createClient, type Charge } from 'jackdaw/client'
const jackdaw = createClient({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:8080' })
export const made: Promise<Charge> = jackdaw.charges.create({ amount: 100, currency: 'usd', source: 'src_x' })
export const status: Promise<'pending' | 'succeeded' | 'failed' | 'voided' | 'refunded'> =
  jackdaw.charges.retrieve('ch_x').then((c) => c.status)
`,
    )
    writeFileSync(
      path.join(dir, 'bad.ts'),
      `import { createClient } from 'jackdaw/client'
const jackdaw = createClient({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:8080' })
export const wrong = jackdaw.charges.create({ amount: '100', currency: 'usd', source: 'src_x' })
export const unknown = jackdaw.charges.list({ status: 'done' })
`,
    )
    const checked = run([path.resolve('node_modules/typescript/bin/tsc'), '-p', dir])
    const errors = checked.out.split('\n').filter((l) => l.includes('error TS'))
    expect(errors.every((l) => l.startsWith('bad.ts') || l.includes('bad.ts('))).toBe(true)
    expect(errors.filter((l) => l.includes('bad.ts(3,'))).toHaveLength(1)
    expect(errors.filter((l) => l.includes('bad.ts(4,'))).toHaveLength(1)
  }, 240_000)
})

describe('npm pack', () => {
  it('packs the build every export, the command and the docs need, and nothing of the repository besides', () => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    // the pretest step has built: the scripts would only build again
    const packed = spawnSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' })
    expect(packed.status, packed.stderr).toBe(0)
    const files = new Set((JSON.parse(packed.stdout)[0].files as { path: string }[]).map((f) => f.path))
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      bin: Record<string, string>
      exports: Record<string, string | Record<string, string>>
    }
    // every target of every export but the repository's own condition (its TypeScript sources)
    const targets = Object.values(pkg.exports).flatMap((e) =>
      typeof e === 'string'
        ? [e]
        : Object.entries(e).flatMap(([condition, to]) => (condition === 'jackdaw-source' ? [] : [to])),
    )
    for (const file of [...targets, ...Object.values(pkg.bin), 'scripts/build-state.mjs', 'dist/service.mjs']) {
      expect(files, file).toContain(file.replace(/^\.\//, ''))
    }
    expect(files).toContain('dist/dashboard/app.js')
    expect(files).toContain('docs/testing.md')
    for (const file of files)
      expect(file, file).toMatch(/^(dist|bin|docs|scripts\/build-state\.mjs|README\.md|package\.json)/)
  })
})
