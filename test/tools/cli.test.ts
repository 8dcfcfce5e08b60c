import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runToEnd, runTs } from '../helpers/process.js'

// the commands on the embedded store, which need no server of the run's; serve --workers on the
// run's PostgreSQL is in cli-postgres.test.ts
const dir = mkdtempSync(path.join(tmpdir(), 'jackdaw-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const env = { JACKDAW_DATA_DIR: dir, PORT: '0', DATABASE_URL: undefined, JACKDAW_ENCRYPTION_KEY: undefined }

async function me(base: string, key: string) {
  const res = await fetch(`${base}/v2/me`, { headers: { authorization: `Bearer ${key}` } })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

// each command on a stopped store starts the embedded server and stops it again
describe('the command line on the embedded store', () => {
  it('creates an account whose keys the service then accepts; a second process on the directory is refused', async () => {
    const created = await runToEnd(['src/cli.ts', 'account', 'create', '--name', 'Corner Shop', '--json'], env)
    expect(created.code).toBe(0)
    const keys = JSON.parse(created.output.slice(created.output.indexOf('{')))
    expect(keys.sk_test_key).toMatch(/^sk_test_[A-Za-z0-9]{24,}$/)
    expect(keys.pk_live_key).toMatch(/^pk_live_[A-Za-z0-9]{24,}$/)
    expect(keys.webhook_secret_test).toMatch(/^whsec_/)
    expect(keys.webhook_secret_live).toMatch(/^whsec_/)

    const server = runTs(['src/cli.ts', 'serve'], env)
    try {
      const [, base] = await server.waitFor(/listening on (http:\/\/\S+)/)
      const test = await me(base as string, keys.sk_test_key)
      expect(test.status).toBe(200)
      expect(test.body).toMatchObject({ id: keys.id, name: 'Corner Shop', livemode: false })
      const live = await me(base as string, keys.sk_live_key)
      expect(live.body.livemode).toBe(true)
      // the first start on this store saw an account already, so it made no default one
      expect(server.output()).not.toMatch(/test secret key/)

      const second = await runToEnd(['src/cli.ts', 'serve'], env)
      expect(second.code).toBe(1)
      expect(second.output).toMatch(/data directory .* is in use by another Jackdaw process/)

      // a command works beside the running service, on the server it owns
      const other = await runToEnd(['src/cli.ts', 'account', 'create', '--name', 'Kiosk', '--json'], env)
      expect(other.code).toBe(0)
      const otherKeys = JSON.parse(other.output.slice(other.output.indexOf('{')))
      expect((await me(base as string, otherKeys.sk_test_key)).body).toMatchObject({ name: 'Kiosk' })

      // a test-mode secret rolled there is the one the service signs with; the live one stays
      const roll = await runToEnd(
        ['src/cli.ts', 'webhook-secret', 'roll', '--account', keys.id, '--mode', 'test', '--json'],
        env,
      )
      expect(roll.code, roll.output).toBe(0)
      const secret = JSON.parse(roll.output.slice(roll.output.indexOf('{'))).webhook_secret
      expect(secret).toMatch(/^whsec_/)
      expect(secret).not.toBe(keys.webhook_secret_test)
      expect((await me(base as string, keys.sk_test_key)).body.webhook_secret).toBe(secret)
      expect((await me(base as string, keys.sk_live_key)).body.webhook_secret).toBe(keys.webhook_secret_live)
    } finally {
      await server.stop()
    }

    const rolled = await runToEnd(
      ['src/cli.ts', 'account', 'roll-key', '--account', keys.id, '--kind', 'secret', '--mode', 'test', '--json'],
      env,
    )
    expect(rolled.code).toBe(0)
    const newKey = JSON.parse(rolled.output.slice(rolled.output.indexOf('{'))).key
    const again = runTs(['src/cli.ts', 'serve'], env)
    try {
      const [, base] = await again.waitFor(/listening on (http:\/\/\S+)/)
      expect((await me(base as string, keys.sk_test_key)).status).toBe(401)
      expect((await me(base as string, newKey)).status).toBe(200)
    } finally {
      await again.stop()
    }
  }, 240_000)

  it('answers --help and refuses unknown options and bad settings with a clear message', async () => {
    const help = await runToEnd(['src/cli.ts', 'account', '--help'], env)
    expect(help.code).toBe(0)
    expect(help.output).toMatch(/account create --name NAME/)
    const bad = await runToEnd(['src/cli.ts', 'account', 'create', '--nmae', 'x'], env)
    expect(bad.code).toBe(2)
    expect(bad.output).toMatch(/Unknown option '--nmae'/)
    const port = await runToEnd(['src/cli.ts', 'serve'], { ...env, PORT: 'eighty' })
    expect(port.code).toBe(1)
    expect(port.output).toMatch(/PORT="eighty"/)
    const workers = await runToEnd(['src/cli.ts', 'serve', '--workers', 'two'], env)
    expect(workers.code).toBe(2)
    expect(workers.output).toMatch(/--workers must be 1 to 64/)
    for (const args of [
      ['help', 'acount'],
      ['acount', '--help'],
      ['help', 'constructor'],
    ]) {
      const unknown = await runToEnd(['src/cli.ts', ...args], env)
      expect(unknown.code, args.join(' ')).toBe(2)
      expect(unknown.output).toMatch(/no command is named (acount|constructor)/)
    }
    expect((await runToEnd(['src/cli.ts', 'help', 'listen'], env)).output).toMatch(/--forward-to URL/)
    const bare = await runToEnd(['src/cli.ts', 'account'], env)
    expect(bare.code).toBe(2)
    expect(bare.output).toMatch(/account takes a command: create or roll-key/)
    // run where no store is, a command makes none of its own
    const nowhere = path.join(dir, 'elsewhere', 'data')
    const lost = await runToEnd(['src/cli.ts', 'account', 'create', '--name', 'Lost'], {
      ...env,
      JACKDAW_DATA_DIR: nowhere,
    })
    expect(lost.code).toBe(2)
    expect(lost.output).toContain(`no data directory at ${nowhere}`)
    expect(existsSync(nowhere)).toBe(false)
    // an account id that names none changes nothing and says so
    for (const args of [
      ['account', 'roll-key', '--account', 'acct_nope', '--kind', 'secret', '--mode', 'test'],
      ['webhook-secret', 'roll', '--account', 'acct_nope', '--mode', 'test'],
    ]) {
      const run = await runToEnd(['src/cli.ts', ...args], env)
      expect(run.code, run.output).toBe(1)
      expect(run.output).toMatch(/No such account: 'acct_nope'/)
      expect(run.output).not.toMatch(/foreign key|whsec_|sk_test_/)
    }
  }, 120_000)
})

describe('the options each command takes', () => {
  // where no store is: a command that took its options would stop at that, having made nothing
  const nowhere = { ...env, JACKDAW_DATA_DIR: path.join(dir, 'no-store') }

  it("refuses another command's option, naming it and the command, before it does anything", async () => {
    const [serve, create] = await Promise.all([
      runToEnd(['src/cli.ts', 'serve', '--port', '18452', '--host', '127.0.0.1'], { ...nowhere, PORT: 'eighty' }),
      runToEnd(['src/cli.ts', 'account', 'create', '--name', 'Y', '--events', 'charge.succeeded'], nowhere),
    ])
    expect(serve.code, serve.output).toBe(2)
    expect(serve.output).toContain('jackdaw: serve does not take --port')
    expect(create.code, create.output).toBe(2)
    expect(create.output).toContain('jackdaw: account create does not take --events')
    expect(create.output).not.toMatch(/no data directory/)
  })

  it('takes every option its --help names', async () => {
    // each command's words as a usage line names them (`account create`; `trigger SCENARIO` is
    // `trigger`), with every --option of the help from there to the next usage line
    const main = await runToEnd(['src/cli.ts', '--help'], nowhere)
    const topics = [...new Set([...main.output.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1] as string))]
    const helps = new Map(
      await Promise.all(
        topics.map(
          async (topic) => [topic, (await runToEnd(['src/cli.ts', topic, '--help'], nowhere)).output] as const,
        ),
      ),
    )
    const documented = new Map<string, Set<string>>()
    for (const help of helps.values()) {
      for (const usage of help.split(/\bjackdaw (?=[a-z])/).slice(1)) {
        const words = usage.match(/^[a-z][a-z-]*(?: [a-z][a-z-]*)*/)?.[0] as string
        const options = documented.get(words) ?? new Set()
        for (const [option] of usage.matchAll(/--[a-z][a-z-]*/g)) if (option !== '--help') options.add(option)
        documented.set(words, options)
      }
    }
    expect([...documented.keys()]).toEqual(expect.arrayContaining(['serve', 'account create', 'trigger']))
    const runs = await Promise.all(
      [...documented].map(async ([words, options]) => {
        // a value after each: a flag leaves it as an argument, which --help does not mind
        const args = [...words.split(' '), ...[...options].flatMap((option) => [option, '1']), '--help']
        return {
          args,
          help: helps.get(words.split(' ')[0] as string),
          ...(await runToEnd(['src/cli.ts', ...args], nowhere)),
        }
      }),
    )
    for (const run of runs) {
      expect(run.code, `${run.args.join(' ')}: ${run.output}`).toBe(0)
      expect(run.output).toBe(run.help)
    }
  })
})

describe('npm start on a fresh data directory', () => {
  it('makes a default account and an admin token and prints them, and they work, again at the next start', async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), 'jackdaw-start-'))
    let firstKey = ''
    let adminToken = ''
    try {
      const keysFile = path.join(fresh, 'test-keys.json')
      for (const start of [1, 2]) {
        const server = runTs(['src/main.ts'], { ...env, JACKDAW_DATA_DIR: fresh })
        try {
          const [, base] = await server.waitFor(/listening on (http:\/\/\S+)/)
          const [, sk] = await server.waitFor(/test secret key: (sk_test_\S+)/)
          const [, token] = await server.waitFor(/admin token \(POST \/v2\/accounts\): (\S+)/)
          expect((await me(base as string, sk as string)).status).toBe(200)
          // the printed admin token makes accounts over the API
          const made = await fetch(`${base}/v2/accounts`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Shop ${start}` }),
          })
          expect(made.status).toBe(201)
          if (start === 1) {
            firstKey = sk as string
            adminToken = token as string
          } else {
            expect(sk).toBe(firstKey)
            expect(token).toBe(adminToken)
          }
        } finally {
          await server.stop()
        }
      }
      // no secret is kept in plain text beside the data: the key file holds it encrypted
      for (const file of readdirSync(fresh, { recursive: true, encoding: 'utf8' })) {
        const full = path.join(fresh, file)
        if (!statSync(full).isFile()) continue
        expect(readFileSync(full).includes(firstKey)).toBe(false)
        expect(readFileSync(full).includes(adminToken)).toBe(false)
      }
      // the admin token is kept, encrypted, where only the service's user may read it
      expect(statSync(path.join(fresh, 'admin-token.json')).mode & 0o777).toBe(0o600)
      expect(readFileSync(keysFile, 'utf8')).toMatch(/"sk_test_key_enc": "v1:/)

      // once the default account's key is rolled, a start no longer shows the old one as if it worked
      const account = JSON.parse(readFileSync(keysFile, 'utf8')).account as string
      const rolled = await runToEnd(
        ['src/cli.ts', 'account', 'roll-key', '--account', account, '--kind', 'secret', '--mode', 'test'],
        { ...env, JACKDAW_DATA_DIR: fresh },
      )
      expect(rolled.code, rolled.output).toBe(0)
      const after = runTs(['src/main.ts'], { ...env, JACKDAW_DATA_DIR: fresh })
      try {
        await after.waitFor(/listening on http:\/\/\S+/)
        await after.waitFor(/jackdaw account create --name NAME/)
        expect(after.output()).not.toContain(firstKey)
      } finally {
        await after.stop()
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true })
    }
  }, 240_000)
})

describe('jackdaw processor', () => {
  it('serves the simulator over HTTP to callers with the shared secret only', async () => {
    const secret = 'a-shared-secret-of-some-length'
    const proc = runTs(['src/cli.ts', 'processor', '--port', '0'], { ...env, JACKDAW_LIVE_PROCESSOR_SECRET: secret })
    try {
      const [, base] = await proc.waitFor(/listening on (http:\/\/\S+)/)
      const request = {
        chargeId: 'ch_test',
        livemode: true,
        sourceType: 'card',
        amount: 100,
        currency: 'usd',
        requireAuth: true,
        vaulted: false,
        bankLinked: false,
        card: { number: '4000000000009995', cvc: '123', expMonth: '12', expYear: '2035' },
      }
      const call = (auth: string) =>
        fetch(`${base}/authorize`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: auth },
          body: JSON.stringify({ request }),
        })
      expect((await call('Bearer wrong-secret-wrong-secret')).status).toBe(401)
      const res = await call(`Bearer ${secret}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ outcome: 'declined', failure: { code: 'insufficient_funds' } })
    } finally {
      await proc.stop()
    }
    const missing = await runToEnd(['src/cli.ts', 'processor'], env)
    expect(missing.code).toBe(2)
    expect(missing.output).toMatch(/JACKDAW_LIVE_PROCESSOR_SECRET must be set/)
  }, 60_000)
})

describe('jackdaw deliveries redeliver', () => {
  it('reports an unknown delivery plainly and needs an id', async () => {
    const unknown = await runToEnd(['src/cli.ts', 'deliveries', 'redeliver', 'dlv_0000'], env)
    expect(unknown.code).toBe(1)
    expect(unknown.output).toMatch(/No such delivery: 'dlv_0000'/)
    const noId = await runToEnd(['src/cli.ts', 'deliveries', 'redeliver'], env)
    expect(noId.code).toBe(2)
  }, 60_000)
})
