import { describe, expect, it } from 'vitest'
import { checkNotifyAddress, isPublicAddress } from '../src/services/notify-address.js'

describe('which addresses a live notify call may go to', () => {
  it.each([
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:8.8.8.8', true],
  ])('%s is public: %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected)
  })

  it('refuses private hosts in live mode only, and non-http schemes always', async () => {
    expect(await checkNotifyAddress('http://127.0.0.1:9000/hook', false)).toBeUndefined()
    expect(await checkNotifyAddress('http://127.0.0.1:9000/hook', true)).toMatch(/public addresses/)
    expect(await checkNotifyAddress('http://[::1]/hook', true)).toMatch(/public addresses/)
    expect(await checkNotifyAddress('https://8.8.8.8/hook', true)).toBeUndefined()
    expect(await checkNotifyAddress('ftp://8.8.8.8/hook', false)).toMatch(/http or https/)
    expect(await checkNotifyAddress('https://user:pw@8.8.8.8/hook', false)).toMatch(/credentials/)
  })
})
