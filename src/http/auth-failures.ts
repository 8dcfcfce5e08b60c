import type { Redis } from 'ioredis'
import ipaddr from 'ipaddr.js'
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import { AppError } from '../errors.js'
import type { KeyLookupGuard } from '../services/accounts.js'

export interface AuthFailureSettings {
  /** well-formed keys the store did not know, per client address per window, before refusals */
  max: number
  windowSeconds: number
  /** shares the counts across processes and machines */
  redis?: Redis | undefined
  /** keeps the counts of several deployments (or tests) on one Redis apart */
  namespace?: string
}

/**
 * Counts, per client address, the keys that were well formed but unknown to the store. Each such
 * key costs a lookup in the store, and the per-key rate limit counts every new key apart, so a
 * client sending random keys would otherwise cost the store one query a request without bound, and
 * could try keys for ever. Past `max` in a window, an address's requests whose key is not already
 * known valid are refused before any lookup, until the window ends. A key known valid (cached by
 * this process) is never refused for it, so a working integration behind the same address goes on.
 * Each lookup counts from before it starts and gives its count back when the key is found: at most
 * `max` lookups of one address are ever under way or unknown in a window, however many requests it
 * sends at once.
 */
export function authFailureCounter(settings: AuthFailureSettings): KeyLookupGuard {
  const options = { points: settings.max, duration: settings.windowSeconds }
  const keyPrefix = settings.namespace ?? 'jackdaw-auth-failures'
  const inProcess = new RateLimiterMemory({ ...options, keyPrefix })
  // a Redis outage must not open the door: each process then counts alone
  const limiter: RateLimiterAbstract = settings.redis
    ? new RateLimiterRedis({
        ...options,
        keyPrefix,
        storeClient: settings.redis,
        rejectIfRedisNotReady: true,
        insuranceLimiter: inProcess,
      })
    : inProcess

  return {
    async reserve(client) {
      try {
        await limiter.consume(countedAddress(client.ip), 1)
      } catch (refused) {
        // Redis's errors go to the in-process count; anything else that is not a refusal lets the
        // lookup go uncounted, as the rate limit does, rather than stop payments
        if (!(refused instanceof RateLimiterRes)) return
        const seconds = Math.max(1, Math.ceil(refused.msBeforeNext / 1000))
        throw new AppError(
          'rate_limited',
          `Too many requests with unknown API keys from this address; retry after ${seconds} s`,
          { headers: { 'Retry-After': String(seconds) } },
        )
      }
    },
    async release(client) {
      await limiter.reward(countedAddress(client.ip), 1).catch(() => {})
    },
  }
}

/** Addresses that are not one, counted together: none can start afresh by changing its text. */
const UNPARSED = 'unparsed'

/**
 * What a client address is counted as: an IPv4 address as itself (also when it comes mapped into
 * IPv6, or with a port, as some proxies forward it), an IPv6 address by its /64, the smallest block
 * a subscriber is given, so that a client cannot start afresh with each address of its block.
 */
export function countedAddress(address: string): string {
  const bare = ipaddr.isValid(address)
    ? address
    : (/^\[([^\]]+)\](?::\d+)?$/.exec(address)?.[1] ?? /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(address)?.[1])
  if (bare === undefined || !ipaddr.isValid(bare)) return UNPARSED
  const ip = ipaddr.process(bare)
  if (ip.kind() === 'ipv4') return ip.toString()
  return `${(ip as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`
}
