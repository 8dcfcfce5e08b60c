import type { FastifyRequest } from 'fastify'
import { hashApiKey } from '../domain/keys.js'
import { AppError, type Violation } from '../errors.js'
import type { AccountService, Caller, KeyLookupGuard } from '../services/accounts.js'
import { headerSentOnce } from './headers.js'

/** Who may call a route: any valid key, secret keys only, or no key (documents, hosted pages). */
export type RouteAuth = 'public' | 'secret' | 'none'

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth
    /** the body may be left out and is then taken as {} */
    bodyOptional?: boolean
    /**
     * rules of the body its schema cannot state, also named in the answer to a body the schema
     * refuses; `livemode` is the key's mode, absent on a route that takes no key
     */
    bodyRules?: (body: unknown, livemode?: boolean) => Violation[]
    /** the route makes its own outcomes: a Jackdaw-Test-Fault header is refused (http/test-fault-header.ts) */
    refusesTestFaults?: boolean
    /** the answer is a stream of server-sent events (text/event-stream), as the OpenAPI document says */
    streams?: boolean
  }
  interface FastifyRequest {
    caller: Caller
    /** the request's API key and its hash once worked out (presentedKey): null before, false for none */
    presented: PresentedKey | false | null
  }
}

/** HTTP Basic with the key as user name and an empty password, or a Bearer token. */
export function keyFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined
  const space = header.indexOf(' ')
  if (space < 0) return undefined
  const scheme = header.slice(0, space).toLowerCase()
  const value = header.slice(space + 1).trim()
  if (scheme === 'bearer') return value || undefined
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    const user = colon < 0 ? decoded : decoded.slice(0, colon)
    return user || undefined
  }
  return undefined
}

/** A request's API key and the hash it is stored and counted by. */
export interface PresentedKey {
  key: string
  hash: string
}

/**
 * The request's API key and its hash, worked out once a request: the rate limit (app.ts) and
 * authentication both need them.
 */
export function presentedKey(request: FastifyRequest): PresentedKey | undefined {
  if (request.presented === null) {
    const key = keyFromHeader(request.headers.authorization)
    request.presented = key === undefined ? false : { key, hash: hashApiKey(key) }
  }
  return request.presented || undefined
}

/**
 * `lookupGuard`, when given, is asked around each lookup of a key not cached, with the client's
 * address (http/auth-failures.ts).
 */
export function authHook(accounts: AccountService, lookupGuard?: KeyLookupGuard) {
  return async function authenticate(request: FastifyRequest) {
    const needs = request.routeOptions.config.auth ?? 'secret'
    if (needs === 'none') return
    // the same key sent twice, in either scheme, is one key
    headerSentOnce(request, 'authorization', 'Authorization', keyFromHeader)
    const presented = presentedKey(request)
    if (!presented) {
      throw new AppError(
        'authentication_required',
        'No API key provided: use HTTP Basic with the key as user name, or Authorization: Bearer <key>',
      )
    }
    const caller = await accounts.authenticate(presented.key, presented.hash, lookupGuard, request)
    if (needs === 'secret' && caller.keyKind !== 'secret') {
      throw new AppError('secret_key_required', 'This operation needs a secret key; a public key was used')
    }
    request.caller = caller
  }
}
