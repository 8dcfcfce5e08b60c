import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ListeningApp, listeningApp, recorder } from '../helpers/listening.js'
import { runToEnd } from '../helpers/process.js'

/**
 * `jackdaw trigger` as a process against a running service: it runs a scenario through the API and
 * prints the ids it made, or the whole answer, or the list of scenarios; refusals come back as
 * the service's messages.
 */

let t: ListeningApp
let receiver: Awaited<ReturnType<typeof recorder>>
beforeAll(async () => {
  t = await listeningApp({}, { notify: { schedule: [], timeoutMs: 2000, pollMs: 50 } })
  receiver = await recorder()
})
afterAll(async () => {
  await t.close()
  await receiver.close()
})

const trigger = (args: string[], env: Record<string, string | undefined> = {}) =>
  runToEnd(['src/cli.ts', 'trigger', ...args], {
    JACKDAW_API_URL: t.url,
    JACKDAW_API_KEY: t.account.sk_test_key,
    ...env,
  })

describe('jackdaw trigger', () => {
  it('runs a scenario with its overrides and prints one line per object, the charge as the API has it', async () => {
    // options may come before the scenario's name as well as after it
    const run = await trigger([
      '--amount',
      '2400',
      'charge.partially_refunded',
      '--currency',
      'eur',
      '--metadata',
      'order=A-17',
      '--metadata',
      'channel=cli',
      '--notify',
      `${receiver.url}/hooks`,
    ])
    expect(run.code, run.output).toBe(0)
    const ids = Object.fromEntries(
      run.output
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)),
    )
    expect(Object.keys(ids).sort()).toEqual(['charge', 'refund', 'source'])
    expect(run.output).toMatch(/^charge\s+ch_[0-9a-f]{32} {2}succeeded$/m)
    const charge = (await t.sk.get(`/v2/charges/${ids.charge}`)).body
    expect(charge).toMatchObject({
      amount: 2400,
      currency: 'eur',
      amount_refunded: 1200,
      metadata: { order: 'A-17', channel: 'cli' },
    })
    expect(charge.source.id).toBe(ids.source)
    expect(charge.refunds.map((r: { id: string }) => r.id)).toEqual([ids.refund])
    await receiver.waitFor((r) => r.body.includes('"charge.refunded"') && r.body.includes(ids.charge))
  })

  it('--json prints the whole answer; a decline code and a new customer pass through', async () => {
    const run = await trigger([
      'charge.failed',
      '--decline-code',
      'stolen_card',
      '--customer',
      '{"email": "cli@example.com", "description": "From the command line"}',
      '--json',
      '--key',
      t.account.sk_test_key,
    ])
    expect(run.code, run.output).toBe(0)
    const answer = JSON.parse(run.output)
    expect(answer).toMatchObject({ object: 'scenario_run', scenario: 'charge.failed' })
    expect(answer.objects.charge).toMatchObject({ status: 'failed', failure_data: { code: 'stolen_card' } })
    expect(answer.objects.customer).toMatchObject({ email: 'cli@example.com' })
    expect((await t.sk.get(`/v2/charges/${answer.objects.charge.id}`)).body).toEqual(answer.objects.charge)
  })

  it('--list names every scenario and its overrides', async () => {
    const list = await trigger(['--list'])
    expect(list.code).toBe(0)
    const names = (await t.sk.get('/v2/test/scenarios')).body.data.map((s: { name: string }) => s.name)
    expect(names.length).toBeGreaterThan(5)
    for (const name of names) expect(list.output).toMatch(new RegExp(`^${name.replace('.', '\\.')}$`, 'm'))
    expect(list.output).toMatch(/--decline-code \(string\)/)
  })

  it("refusals: the service's 404 and 422, a live key, and usage errors", async () => {
    const unknown = await trigger(['charge.teleported'])
    expect(unknown.code).toBe(1)
    expect(unknown.output).toMatch(/the service answered 404: No such scenario: 'charge.teleported'/)
    const bad = await trigger(['charge.failed', '--decline-code', 'bad_luck'])
    expect(bad.code).toBe(1)
    expect(bad.output).toMatch(/the service answered 422: decline_code must be one of/)
    // a live key is refused before anything is asked of the service
    const live = await trigger(['charge.succeeded', '--key', t.account.sk_live_key])
    expect(live.code).toBe(2)
    expect(live.output).toMatch(/scenarios run in test mode only: give a secret test key/)
    expect(live.output).not.toContain(t.account.sk_live_key)
    expect((await t.skLive.get('/v2/charges/')).body.data).toEqual([])
  })

  it('usage errors: a bad amount, no key; --help names the command', async () => {
    const amount = await trigger(['charge.succeeded', '--amount', 'ten'])
    expect(amount.code).toBe(2)
    expect(amount.output).toMatch(/--amount must be a whole number/)
    const noKey = await trigger(['charge.succeeded'], { JACKDAW_API_KEY: undefined })
    expect(noKey.code).toBe(2)
    const help = await runToEnd(['src/cli.ts', '--help'])
    expect(help.output).toMatch(/trigger SCENARIO/)
  })
})
