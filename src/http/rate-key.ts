import type { FastifyRequest } from 'fastify'
import { parseApiKey } from '../domain/keys.js'
import { presentedKey } from './auth.js'
import { countedAddress } from './auth-failures.js'

/**
 * What a request is counted under by the rate limit. A secret key is its holder's alone: its
 * requests count under the key (by its hash, so no key is written to Redis), from wherever they
 * come. A public key is published in every payer's page, so its requests count under the key and
 * the client's address together: a flood from one address uses up that address's count, not the
 * merchant's checkout, and never the same account's secret key. Everything else counts by the
 * client's address: requests to routes that take no key (documents, hosted pages, unknown
 * routes), whatever Authorization they carry, and keys that are not of a key's shape, so that
 * made-up headers cannot each open a count of their own.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const auth = request.routeOptions.config?.auth
  const presented = auth === 'public' || auth === 'secret' ? presentedKey(request) : undefined
  const kind = presented && parseApiKey(presented.key)?.kind
  // a secret key counts under the key alone: the address need not be parsed
  if (kind === 'secret') return `key:${presented?.hash}`
  const address = countedAddress(request.ip)
  if (kind === 'public') return `key:${presented?.hash}:${address}`
  return `ip:${address}`
}
