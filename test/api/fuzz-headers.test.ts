import fc from 'fast-check'
import { describe, it } from 'vitest'
import {
  acceptHeader,
  authorizationHeader,
  bodyEncoding,
  contentLengthHeader,
  contentTypeHeader,
  idempotencyKeyHeader,
} from '../helpers/fuzz-headers.js'
import { ADMIN_TOKEN, bodyText, sometimes, urlArb } from '../helpers/fuzz-requests.js'
import { ROUTES, type Route } from '../helpers/fuzz-routes.js'
import { checkAnswer, f, params, type Req, send, TIMEOUT, useFuzzApp } from './fuzz-harness.js'

/**
 * Fuzzing headers (see fuzz-harness.ts for the properties and the environment): odd
 * Authorization, Idempotency-Key, Content-Type, Content-Length, Accept and Content-Encoding
 * values answer below 500 in the one envelope.
 */

useFuzzApp()

describe('fuzz: every endpoint answers below 500 in the one envelope', () => {
  it(
    'random headers: Authorization, Idempotency-Key, Content-Type, Content-Length, Accept',
    async () => {
      // the keys of the account the route acts on; the operator's token, mangled too, on its routes
      const main = authorizationHeader(f.keys)
      const sandbox = authorizationHeader(f.sandbox.keys)
      const admin = fc.oneof(
        { weight: 3, arbitrary: fc.constant(`Bearer ${ADMIN_TOKEN}`) },
        { weight: 1, arbitrary: authorizationHeader({ ...f.keys, skTest: ADMIN_TOKEN }) },
      )
      const authorization = (r: Route) => (r.auth === 'admin' ? admin : r.sandbox ? sandbox : main)
      const route = fc.constantFrom(...ROUTES.filter((r) => !r.path.startsWith('/v2/hosted/')))
      const req = route.chain((r) =>
        fc
          .record({
            url: urlArb(f, r),
            authorization: sometimes(authorization(r), 0.9),
            idempotencyKey: sometimes(idempotencyKeyHeader, 0.3),
            contentType: sometimes(contentTypeHeader, 0.85),
            contentLength: sometimes(contentLengthHeader, 0.15),
            accept: sometimes(acceptHeader, 0.3),
            body: bodyText(f, r),
            encoding: bodyEncoding,
            contentEncoding: sometimes(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x'), 0.1),
          })
          .map((h): Req => {
            const headers: Record<string, string> = {}
            if (h.authorization !== undefined) headers.authorization = h.authorization
            if (h.idempotencyKey !== undefined) headers['idempotency-key'] = h.idempotencyKey
            if (h.contentType !== undefined) headers['content-type'] = h.contentType
            if (h.contentLength !== undefined) headers['content-length'] = h.contentLength
            if (h.accept !== undefined) headers.accept = h.accept
            if (h.contentEncoding !== undefined) headers['content-encoding'] = h.contentEncoding
            const withBody = r.method !== 'GET'
            return {
              method: r.method,
              url: h.url,
              headers,
              ...(withBody ? { payload: Buffer.from(h.body, h.encoding) } : {}),
            }
          }),
      )
      await fc.assert(
        fc.asyncProperty(req, async (r) => checkAnswer(r, await send(r))),
        params(400),
      )
    },
    TIMEOUT,
  )
})
