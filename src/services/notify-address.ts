import { Resolver } from 'node:dns/promises'
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

/** The longest a notify host may take to resolve in live mode. */
export const NOTIFY_LOOKUP_TIMEOUT_MS = 3_000

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/**
 * Resolves the hosts of live notify addresses by asking DNS itself (c-ares, in the event loop),
 * each within a time limit. A payer's browser names them, with the account's public key, so a name
 * server that answers late or never is to be expected; `dns.lookup` would run getaddrinfo on one of
 * libuv's four threads, shared with the process's other lookups (the live processor's among them)
 * and its file access, and a handful of such names would hold all four. Names known only to the
 * machine (`/etc/hosts`) do not resolve here: a live notify address is a public one.
 */
export class NotifyHostResolver {
  readonly #resolver: Resolver
  readonly #timeoutMs: number

  constructor(opts: { servers?: string[]; timeoutMs?: number } = {}) {
    this.#timeoutMs = opts.timeoutMs ?? NOTIFY_LOOKUP_TIMEOUT_MS
    // c-ares doubles the wait with each try: the two tries fit in the limit
    this.#resolver = new Resolver({ timeout: Math.max(1, Math.floor(this.#timeoutMs / 3)), tries: 2 })
    if (opts.servers) this.#resolver.setServers(opts.servers)
  }

  /** Every address of the host, or a rejection when it has none or does not answer in time. */
  async addresses(host: string): Promise<ResolvedAddress[]> {
    const family = isIP(host)
    if (family !== 0) return [{ address: host, family: family as 4 | 6 }]
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`${host} did not resolve in time`), { code: 'ETIMEOUT' })),
        this.#timeoutMs,
      )
    })
    try {
      const [v4, v6] = await Promise.race([
        Promise.allSettled([this.#resolver.resolve4(host), this.#resolver.resolve6(host)]),
        late,
      ])
      const found: ResolvedAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ]
      if (found.length > 0) return found
      throw v4.status === 'rejected'
        ? v4.reason
        : Object.assign(new Error(`${host} has no address`), { code: 'ENODATA' })
    } finally {
      clearTimeout(timer)
    }
  }
}

/** The system's name servers, as /etc/resolv.conf names them. */
export const systemResolver = new NotifyHostResolver()

/**
 * Why a notify address is refused, or undefined when it is fine. http and https only; in live
 * mode the host must resolve to public addresses only, so a notify call cannot be aimed at the
 * service's own network. Test mode allows local receivers.
 */
export async function checkNotifyAddress(
  url: string,
  livemode: boolean,
  resolver: NotifyHostResolver = systemResolver,
): Promise<string | undefined> {
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
  let addresses: ResolvedAddress[]
  try {
    addresses = await resolver.addresses(parsed.hostname.replace(/^\[|\]$/g, ''))
  } catch {
    return 'redirect.notify names a host that does not resolve'
  }
  if (!addresses.every((a) => isPublicAddress(a.address))) {
    return 'redirect.notify must resolve to public addresses only in live mode'
  }
  return undefined
}
