import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Vault } from '../crypto/vault.js'
import type { KeyKind } from '../domain/keys.js'
import { AppError } from '../errors.js'
import type { Db } from '../store/db.js'
import { claimKey, completeKey, forgetKey, releaseKey } from '../store/idempotency.js'
import type { Scope } from '../store/scope.js'
import { headerSentOnce } from './headers.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * `requestKey`: what the objects a request makes are marked with, so that a retry of it finds
     * them: the key as kept, with when its record was made. A key sent again after its record
     * expired (24 hours) names a new request, and finds nothing of the old one.
     */
    idempotencyClaim?: { scope: Scope; key: string; requestKey: string }
  }
}

const HEADER = 'idempotency-key'
/** the name some clients of this API family send the same header under */
const ALIAS = 'x-idempotency-key'

/** The key a request sent, under either name; two different keys are refused. */
function sentKey(request: FastifyRequest): string | undefined {
  const main = headerSentOnce(request, HEADER, 'Idempotency-Key')
  const alias = headerSentOnce(request, ALIAS, 'X-Idempotency-Key')
  if (main === undefined) return alias
  if (alias !== undefined && alias !== main) {
    throw new AppError('header_invalid', 'Idempotency-Key and X-Idempotency-Key differ; send one of them', {
      param: 'Idempotency-Key',
    })
  }
  return main
}

/** The path as routing sees it: a trailing slash and doubled slashes make no other operation. */
function canonicalPath(url: string): string {
  const path = (url.split('?')[0] ?? '').replace(/\/{2,}/g, '/')
  return path.length > 1 ? path.replace(/\/$/, '') : path
}

/**
 * JSON with object keys sorted, so that the same body sent with its keys in another order matches.
 * A card's security code (`cvc`, in a source's card or with a charge) counts by its presence only:
 * no form of it, a keyed hash included, is kept past its authorization (PCI DSS 3.3.1.2), and a
 * 3- or 4-digit code would be found again from its hash by trying them all.
 */
function canonicalJson(value: unknown, path = ''): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, `${path}[]`)).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => {
        const at = `${path}.${k}`
        const inner = SECURITY_CODES.has(at) ? '"(given)"' : canonicalJson((value as Record<string, unknown>)[k], at)
        return `${JSON.stringify(k)}:${inner}`
      })
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** Where a body carries a security code: a charge's own, and a new source's card's. */
const SECURITY_CODES = new Set(['.cvc', '.card.cvc'])

/**
 * An Idempotency-Key as it is kept: a keyed hash, never its text, which a client may have filled
 * with anything (an order's details, a card number by mistake). The keys sent with a public key
 * are apart from those sent with the secret key: its holders must not use up the secret key's.
 */
export function keptIdempotencyKey(vault: Vault, keyKind: KeyKind, sent: string): string {
  return vault.fingerprint(`idempotency key\n${keyKind}\n${sent}`)
}

/**
 * `Idempotency-Key` (or `X-Idempotency-Key`, the same header) on a POST: the first request with a key runs and its answer is kept for
 * 24 hours; a retry with the same body gets that answer again; another body, or a retry while the
 * first still runs, is 409. Faults of the service's own (5xx) and refused requests (422) are not
 * kept, so a retry runs again; after a fault, only a retry of the same request. Answers are kept encrypted; the keys of public-key callers are their
 * own, apart from the secret key's.
 */
export function registerIdempotency(
  app: FastifyInstance,
  deps: { db: Db; vault: Vault; leaseSeconds?: number | undefined },
) {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST' || !request.caller) return
    const sent = sentKey(request)
    if (sent === undefined) return
    if (!sent || sent.length > 255 || !/^[\x20-\x7e]+$/.test(sent)) {
      throw new AppError('header_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters', {
        param: 'Idempotency-Key',
      })
    }
    const scope = { accountId: request.caller.accountId, livemode: request.caller.livemode }
    const key = keptIdempotencyKey(deps.vault, request.caller.keyKind, sent)
    const fingerprint = deps.vault.fingerprint(
      `${request.method} ${canonicalPath(request.url)}\n${canonicalJson(request.body ?? null)}`,
    )
    const claim = await claimKey(deps.db, scope, key, fingerprint, deps.leaseSeconds)
    switch (claim.kind) {
      case 'claimed':
        request.idempotencyClaim = { scope, key, requestKey: `${key}.${claim.made}` }
        return
      case 'replay':
        reply.code(claim.statusCode).header('Idempotent-Replayed', 'true').type('application/json')
        return reply.send(deps.vault.decrypt(claim.body))
      case 'mismatch':
        throw new AppError(
          'idempotency_key_reused',
          'This Idempotency-Key was used with another request; use a new key for a new request',
          { param: 'Idempotency-Key' },
        )
      case 'in_flight':
        throw new AppError(
          'idempotency_key_in_use',
          'A request with this Idempotency-Key is still being processed; retry later',
          { param: 'Idempotency-Key' },
        )
    }
  })

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotencyClaim
    if (!claim) return payload
    request.idempotencyClaim = undefined
    // a 422 is a request refused before it changed anything (as schema violations are, before
    // this hook claims the key), so it does not use the key up; after a fault of the service's own
    // (5xx) only the same request may take the key again, to finish what its first attempt began
    try {
      if (reply.statusCode === 422) await forgetKey(deps.db, claim.scope, claim.key)
      else if (reply.statusCode >= 500) await releaseKey(deps.db, claim.scope, claim.key)
      // an answer may hold a secret (a rolled webhook secret) or a payer's details: it is kept sealed
      else await completeKey(deps.db, claim.scope, claim.key, reply.statusCode, deps.vault.encrypt(String(payload)))
    } catch (err) {
      // the answer stands: what it says was done is done. The key stays claimed until its lease
      // runs out (a retry meanwhile is told it is in use), then the same request may take it again.
      request.log.error({ err }, 'idempotency record not updated')
    }
    return payload
  })
}
