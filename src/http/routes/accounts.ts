import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { AppError, invalidParams } from '../../errors.js'
import { DeletedAccount, NewAccount, NewAccountKeys } from '../../schemas/account.js'
import { IdParams, NoBody, withErrors } from '../../schemas/common.js'
import type { KeyLookupGuard } from '../../services/accounts.js'
import type { Services } from '../../services/index.js'
import { keyFromHeader } from '../auth.js'
import { headerSentOnce } from '../headers.js'

/** The tag of the operations a test suite drives the service with; none of them touches live payments. */
export const TEST_MODE_TAG = 'test-mode'

const sha256 = (text: string) => createHash('sha256').update(text).digest()

/**
 * Checks the operator's token on a request. Both sides are hashed first, so the comparison takes
 * the same time whatever the token sent, its length included. A wrong token counts against its
 * client's address as an unknown API key does (`guard`, http/auth-failures.ts): the per-key rate
 * limit counts each token sent apart, and would let a client try tokens without end.
 */
function adminCheck(adminToken: string | undefined, guard: KeyLookupGuard | undefined) {
  const expected = adminToken === undefined ? undefined : sha256(adminToken)
  return async (request: FastifyRequest) => {
    // without a token the operations do not exist, as far as a client can tell
    if (!expected) throw new AppError('route_missing', `No route ${request.method} ${request.url.split('?')[0]}`)
    const presented = keyFromHeader(headerSentOnce(request, 'authorization', 'Authorization', keyFromHeader))
    if (presented === undefined) {
      throw new AppError('authentication_required', 'No admin token provided: use Authorization: Bearer <admin token>')
    }
    await guard?.reserve(request)
    if (!timingSafeEqual(sha256(presented), expected)) {
      throw new AppError('admin_token_invalid', 'Invalid admin token provided')
    }
    await guard?.release(request)
  }
}

/**
 * Accounts made and removed by the operator's token (JACKDAW_ADMIN_TOKEN), so that a test suite
 * can give each test an account of its own. Account keys, live or test, have no say here.
 */
export const accountRoutes: FastifyPluginAsyncTypebox<{
  services: Services
  adminToken: string | undefined
  guard: KeyLookupGuard | undefined
}> = async (app, { services, adminToken, guard }) => {
  const tags = [TEST_MODE_TAG]
  const security = [{ bearerAuth: [] }]
  // before the body is read: a caller without the token learns nothing of what it sent; after the
  // rate limit (its hooks are the routes' own onRequest hooks), which counts the request first
  app.addHook('preParsing', adminCheck(adminToken, guard))

  app.post(
    '/v2/accounts',
    {
      schema: {
        tags,
        security,
        operationId: 'createAccount',
        summary:
          'Make an account with its four keys and two webhook secrets (admin token); deterministic in test mode with a seed',
        body: NewAccount,
        response: withErrors({ 201: NewAccountKeys }),
      },
    },
    async (req, reply) => {
      const { name, deterministic, seed } = req.body
      if (deterministic && seed === undefined) {
        throw invalidParams([{ code: 'parameter_missing', param: 'seed', msg: 'A deterministic account needs a seed' }])
      }
      if (!deterministic && seed !== undefined) {
        throw invalidParams([
          {
            code: 'parameter_invalid',
            param: 'seed',
            msg: 'A seed is for a deterministic account: send deterministic: true',
          },
        ])
      }
      const created = await services.accounts.create(
        name,
        deterministic ? { seed: seed as string | number } : undefined,
      )
      return reply.code(201).send(created)
    },
  )

  app.delete(
    '/v2/accounts/:acct_id',
    {
      config: { bodyOptional: true },
      schema: {
        tags,
        security,
        operationId: 'deleteAccount',
        summary: 'Remove an account and everything of it (admin token)',
        params: IdParams('acct_id', 'acct_'),
        body: NoBody,
        response: withErrors({ 200: DeletedAccount }),
      },
    },
    (req) => services.accounts.remove(req.params.acct_id),
  )
}
