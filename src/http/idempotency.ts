import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Vault } from '../crypto/vault.js'
import { AppError } from '../errors.js'
import type { Db } from '../store/db.js'
import { claimKey, completeKey, releaseKey } from '../store/idempotency.js'
import type { Scope } from '../store/scope.js'

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim?: { scope: Scope; key: string }
  }
}

const HEADER = 'idempotency-key'

/**
 * `Idempotency-Key` on a POST: the first request with a key runs and its answer is kept for
 * 24 hours; a retry with the same body gets that answer again; another body, or a retry while the
 * first still runs, is 409. Faults of the service's own (5xx) are not kept, so a retry runs again.
 */
export function registerIdempotency(app: FastifyInstance, deps: { db: Db; vault: Vault }) {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST' || !request.caller) return
    const raw = request.headers[HEADER]
    if (raw === undefined) return
    const key = Array.isArray(raw) ? raw[0] : raw
    if (!key || key.length > 255) {
      throw new AppError('header_invalid', 'Idempotency-Key must be 1 to 255 characters', {
        param: 'Idempotency-Key',
      })
    }
    const scope = { accountId: request.caller.accountId, livemode: request.caller.livemode }
    const fingerprint = deps.vault.fingerprint(
      `${request.method} ${request.url.split('?')[0]}\n${JSON.stringify(request.body ?? null)}`,
    )
    const claim = await claimKey(deps.db, scope, key, fingerprint)
    switch (claim.kind) {
      case 'claimed':
        request.idempotencyClaim = { scope, key }
        return
      case 'replay':
        reply.code(claim.statusCode).header('Idempotent-Replayed', 'true').type('application/json')
        return reply.send(claim.body)
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
    if (reply.statusCode >= 500) await releaseKey(deps.db, claim.scope, claim.key)
    else await completeKey(deps.db, claim.scope, claim.key, reply.statusCode, String(payload))
    return payload
  })
}
