import { lookup, Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** 2000::/3, the global unicast space: any other IPv6 address is not a public receiver's. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number]
/** The well-known NAT64 prefix, whose last 32 bits are the IPv4 address translated to. */
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number]

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the forms that embed one
 * (IPv4-mapped and -translated, IPv4-compatible, 6to4, well-known NAT64): a call to it reaches
 * that IPv4 address, which is checked in its place. Null for a form whose target cannot be told
 * (local-use NAT64, 64:ff9b:1::/48, translated by the operator's own network); undefined when the
 * address embeds none.
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null | undefined {
  const p = ip.parts as number[]
  const last = () => ipv4Of(p[6] as number, p[7] as number)
  switch (ip.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return last()
    case '6to4':
      return ipv4Of(p[1] as number, p[2] as number)
    case 'rfc6052':
      return ip.match(WELL_KNOWN_NAT64) ? last() : null
    default:
      // IPv4-compatible (::a.b.c.d), deprecated but still understood by some stacks
      return p.slice(0, 6).every((part) => part === 0) ? last() : undefined
  }
}

/**
 * Whether a notify call may go to this address unasked: a public unicast address. IPv4: not
 * loopback, private, link-local, shared (CGNAT), multicast, broadcast, documentation or reserved
 * (ipaddr.js's ranges). IPv6: global unicast only (2000::/3, and none of the special ranges within
 * it: Teredo, benchmarking, documentation, ORCHID…), and where the address embeds an IPv4 one,
 * that IPv4 address is checked in its place.
 */
export function isPublicAddress(text: string): boolean {
  // the strict forms only: ipaddr.js would also read `127.1` or `0x7f.1` as IPv4
  if (isIP(text) === 0) return false
  const ip = ipaddr.parse(text)
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast'
  const v6 = ip as ipaddr.IPv6
  const embedded = embeddedIPv4(v6)
  if (embedded !== undefined) return embedded !== null && embedded.range() === 'unicast'
  return v6.range() === 'unicast' && v6.match(GLOBAL_UNICAST)
}

/**
 * The receivers an operator allows besides public addresses (JACKDAW_NOTIFY_ALLOW_HOSTS): host
 * names, addresses and CIDR ranges, for receivers on the service's own machine or network during
 * development. Empty by default: then only public addresses are called, in both modes.
 */
export class NotifyAllowList {
  readonly #names: Set<string>
  readonly #ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][]

  private constructor(names: Set<string>, ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][]) {
    this.#names = names
    this.#ranges = ranges
  }

  static readonly none = new NotifyAllowList(new Set(), [])

  /** Entries separated by commas or spaces; throws, naming the entry, on one that is none of the three. */
  static parse(entries: string | readonly string[]): NotifyAllowList {
    const list = typeof entries === 'string' ? entries.split(/[\s,]+/) : entries
    const names = new Set<string>()
    const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = []
    for (const raw of list) {
      const entry = raw
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, '')
      if (!entry) continue
      if (entry.includes('/')) {
        try {
          const [net, bits] = ipaddr.parseCIDR(entry)
          ranges.push([net, bits])
        } catch {
          throw new Error(`${raw} is not a CIDR range`)
        }
      } else if (isIP(entry) !== 0) {
        const ip = ipaddr.parse(entry)
        ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128])
      } else if (
        /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/.test(
          entry,
        )
      ) {
        names.add(entry.replace(/\.$/, ''))
      } else {
        throw new Error(`${raw} is not a host name, an address or a CIDR range`)
      }
    }
    return new NotifyAllowList(names, ranges)
  }

  /** The host of a notify address (lowercase, without brackets) is one listed by name. */
  allowsName(host: string): boolean {
    return this.#names.has(host.toLowerCase().replace(/\.$/, ''))
  }

  /** The address is one listed, or in a listed range; an IPv4-mapped address counts as its IPv4 one. */
  allowsAddress(address: string): boolean {
    if (isIP(address) === 0) return false
    const ip = ipaddr.process(address)
    return this.#ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))
  }
}

/** The longest a notify host may take to resolve. */
export const NOTIFY_LOOKUP_TIMEOUT_MS = 3_000

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/**
 * Resolves the hosts of notify addresses by asking DNS itself (c-ares, in the event loop),
 * each within a time limit. A payer's browser names them, with the account's public key, so a name
 * server that answers late or never is to be expected; `dns.lookup` would run getaddrinfo on one of
 * libuv's four threads, shared with the process's other lookups (the live processor's among them)
 * and its file access, and a handful of such names would hold all four. Names known only to the
 * machine (`/etc/hosts`) do not resolve here: a notify address is a public one, unless the operator
lists its name (NotifyAllowList).
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

/** Why a notify host may not be called: it does not resolve, or not to addresses allowed. */
export class NotifyHostRefused extends Error {
  constructor(
    message: string,
    readonly reason: 'dns' | 'address_refused',
  ) {
    super(message)
  }
}

/**
 * The addresses a notify call to `host` may connect to: every address it resolves to, when each is
 * public or allowed, else a NotifyHostRefused. An address is checked as it is; a name the operator
 * lists is resolved as the system does (`/etc/hosts` too) and trusted with whatever it names;
 * any other name is resolved by `resolver` and must resolve to allowed addresses only.
 */
export async function permittedAddresses(
  host: string,
  resolver: NotifyHostResolver,
  allow: NotifyAllowList,
): Promise<ResolvedAddress[]> {
  const family = isIP(host)
  if (family !== 0) {
    if (isPublicAddress(host) || allow.allowsAddress(host)) return [{ address: host, family: family as 4 | 6 }]
    throw new NotifyHostRefused(`${host} is not a public address`, 'address_refused')
  }
  const listed = allow.allowsName(host)
  let found: ResolvedAddress[]
  try {
    found = listed
      ? (await lookup(host, { all: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }))
      : await resolver.addresses(host)
  } catch {
    throw new NotifyHostRefused(`${host} does not resolve`, 'dns')
  }
  const refused = listed ? undefined : found.find((a) => !isPublicAddress(a.address) && !allow.allowsAddress(a.address))
  if (refused)
    throw new NotifyHostRefused(`${host} resolves to ${refused.address}, not a public address`, 'address_refused')
  return found
}

/** A name that means this machine whatever DNS says. */
const LOCAL_NAME = /(^|\.)localhost\.?$/

/** What can be told of a notify address before its host is looked up, if anything. */
export type NotifyAddressVerdict = { problem: string | undefined } | { lookup: string }

const notPublic = (livemode: boolean) =>
  livemode
    ? 'must resolve to public addresses only'
    : 'must resolve to public addresses only; a receiver on this machine needs JACKDAW_NOTIFY_ALLOW_HOSTS (docs/api.md)'

/**
 * The part of checkNotifyAddress that needs no network: why the address is refused, undefined
 * when it is fine, or (`lookup`) the host whose addresses alone can tell. A body its schema refused
 * is checked this far, so that its answer names a notify address at a private IP too.
 */
export function notifyAddressWithoutLookup(
  url: string,
  livemode: boolean,
  allow: NotifyAllowList = NotifyAllowList.none,
): NotifyAddressVerdict {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { problem: 'must be an absolute http or https URL' }
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { problem: 'must be an http or https URL' }
  if (parsed.username || parsed.password) return { problem: 'must not carry credentials' }
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  // an address is checked as it is, as permittedAddresses does
  if (isIP(host) !== 0) {
    return { problem: isPublicAddress(host) || allow.allowsAddress(host) ? undefined : notPublic(livemode) }
  }
  if (!livemode && !allow.allowsName(host)) return { problem: LOCAL_NAME.test(host) ? notPublic(livemode) : undefined }
  return { lookup: host }
}

/**
 * Why a notify address is refused (to follow the field's name: `redirect.notify must …`), or
 * undefined when it is fine: http and https only, and a host
 * that is public or one the operator allows (NotifyAllowList), in both modes. An address is checked
 * as it is; in live mode a name must resolve, to allowed addresses only. In test mode a name is
 * not resolved here, so that made-up hosts of integration tests pass: it is resolved and checked
 * when each call is made, as every host is (notify/send.ts).
 */
export async function checkNotifyAddress(
  url: string,
  livemode: boolean,
  resolver: NotifyHostResolver = systemResolver,
  allow: NotifyAllowList = NotifyAllowList.none,
): Promise<string | undefined> {
  const verdict = notifyAddressWithoutLookup(url, livemode, allow)
  if (!('lookup' in verdict)) return verdict.problem
  try {
    await permittedAddresses(verdict.lookup, resolver, allow)
    return undefined
  } catch (err) {
    return (err as NotifyHostRefused).reason === 'dns' ? 'names a host that does not resolve' : notPublic(livemode)
  }
}
