import { describe, expect, it } from 'vitest'
import { startJackdaw } from '../../src/testing/index.js'

describe('startJackdaw', () => {
  it('closes once however often close() is called', async () => {
    const jackdaw = await startJackdaw()
    await jackdaw.close()
    await expect(jackdaw.close()).resolves.toBeUndefined()
    await expect(Promise.all([jackdaw.close(), jackdaw.close()])).resolves.toEqual([undefined, undefined])
  })

  it('refuses an account name POST /v2/accounts refuses', async () => {
    for (const name of ['', 'x'.repeat(101)]) {
      await expect(startJackdaw({ accountName: name }).then((j) => j.close())).rejects.toThrow(
        /accountName.*1 to 100 characters/,
      )
    }
    const longest = await startJackdaw({ accountName: 'x'.repeat(100) })
    try {
      expect((await longest.client.me.retrieve()).name).toBe('x'.repeat(100))
    } finally {
      await longest.close()
    }
  })

  it('refuses a seed POST /v2/accounts refuses, before starting anything', async () => {
    for (const seed of ['', 'x'.repeat(101), -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      await expect(startJackdaw({ deterministic: true, seed }).then((j) => j.close())).rejects.toThrow(
        /seed.*1 to 100 characters or a whole number from 0 to 2\^53 − 1/,
      )
    }
    const zero = await startJackdaw({ deterministic: true, seed: 0 })
    try {
      expect((await zero.client.customers.create({ email: 'zero@example.com', description: 'Zero' })).id).toMatch(
        /^cus_/,
      )
    } finally {
      await zero.close()
    }
  })

  it('refuses an admin token the service would refuse as JACKDAW_ADMIN_TOKEN', async () => {
    for (const adminToken of ['', 'short', 'x'.repeat(15)]) {
      await expect(startJackdaw({ adminToken }).then((j) => j.close())).rejects.toThrow(/adminToken.*16/)
    }
  })
})
