import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/**
 * Loopback, private, link-local and other non-public ranges: a live notify call never goes there.
 * Two lists, because a BlockList matches IPv4 addresses against the IPv4-mapped IPv6 rule.
 */
const blocked4 = new BlockList()
const blocked6 = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked4.addSubnet(net, bits, 'ipv4')
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
] as const) {
  blocked6.addSubnet(net, bits, 'ipv6')
}

export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip)
  if (family === 0) return false
  if (family === 6 && ip.toLowerCase().startsWith('::ffff:')) {
    const v4 = ip.slice(7)
    if (isIP(v4) === 4) return !blocked4.check(v4, 'ipv4')
  }
  return family === 4 ? !blocked4.check(ip, 'ipv4') : !blocked6.check(ip, 'ipv6')
}

/**
 * Why a notify address is refused, or undefined when it is fine. http and https only; in live
 * mode the host must resolve to public addresses only, so a notify call cannot be aimed at the
 * service's own network. Test mode allows local receivers.
 */
export async function checkNotifyAddress(url: string, livemode: boolean): Promise<string | undefined> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'redirect.notify must be an absolute http or https URL'
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return 'redirect.notify must be an http or https URL'
  }
  if (parsed.username || parsed.password) return 'redirect.notify must not carry credentials'
  if (!livemode) return undefined
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address)
  } catch {
    return 'redirect.notify names a host that does not resolve'
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
    return 'redirect.notify must resolve to public addresses only in live mode'
  }
  return undefined
}
