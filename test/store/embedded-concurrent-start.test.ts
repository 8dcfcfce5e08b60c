import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedStoreError, lockForInit } from '../../src/store/data-dir.js'
import { type Running, runTs, stopServersUnder } from '../helpers/process.js'

const root = mkdtempSync(path.join(tmpdir(), 'jackdaw-concurrent-'))
// the server's account (the service runs as root here) passes through to the data directories
chmodSync(root, 0o711)

afterAll(() => {
  stopServersUnder(root)
  rmSync(root, { recursive: true, force: true })
})

/** 'listening', or 'exited' when the process ended first. */
const outcome = (s: Running) =>
  Promise.race([
    s.exited.then(() => 'exited'),
    s.waitFor(/listening on http/, 90_000).then(
      () => 'listening',
      () => 'exited',
    ),
  ])

describe('two services started at once on a new data directory', () => {
  it('one serves, the other stops saying the directory is in use', async () => {
    const dir = path.join(root, 'data')
    const env = { JACKDAW_DATA_DIR: dir, PORT: '0', DATABASE_URL: undefined, JACKDAW_ENCRYPTION_KEY: undefined }
    const a = runTs(['src/main.ts'], env)
    const b = runTs(['src/main.ts'], env)
    try {
      const outcomes = await Promise.all([outcome(a), outcome(b)])
      const outputs = `${a.output()}\n----\n${b.output()}`
      expect(outcomes.sort(), outputs).toEqual(['exited', 'listening'])
      expect(outputs).toMatch(/is in use by another Jackdaw process/)
      expect(outputs).not.toMatch(/initdb failed/)
      expect(existsSync(path.join(dir, 'init.lock'))).toBe(false)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
    // the one that served stopped its server, and the directory starts again
    const again = runTs(['src/main.ts'], env)
    try {
      await again.waitFor(/test secret key/, 60_000)
    } finally {
      expect(await again.stop()).toBe(0)
    }
  }, 180_000)
})

describe("the lock a new data directory's cluster is made under", () => {
  const lockIn = (holder: number) => {
    const dir = mkdtempSync(path.join(root, 'lock-'))
    writeFileSync(path.join(dir, 'init.lock'), `${holder}\n`)
    return dir
  }

  it("is taken over when left with this process's own number, as a container's first process would find it", () => {
    const dir = lockIn(process.pid)
    const release = lockForInit(dir)
    expect(readFileSync(path.join(dir, 'init.lock'), 'utf8').trim()).toBe(String(process.pid))
    release()
    expect(existsSync(path.join(dir, 'init.lock'))).toBe(false)
  })

  it('is refused while another running process holds it, and taken over once none does', () => {
    const dir = lockIn(process.ppid)
    expect(() => lockForInit(dir)).toThrow(EmbeddedStoreError)
    writeFileSync(path.join(dir, 'init.lock'), '2147483646\n')
    lockForInit(dir)()
  })
})
