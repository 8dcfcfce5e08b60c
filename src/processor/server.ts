import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { timingSafeEqualText } from '../crypto/vault.js'
import type { PayerAnswer, PayerStep, PaymentRequest, Processor } from './processor.js'

/**
 * A processor behind HTTP, for `jackdaw processor`: the simulator as a separate process that the
 * service reaches through HttpProcessor, so live mode can be run end to end without a real
 * network. Every call needs the shared secret.
 */
export function createProcessorServer(opts: {
  processor: Processor
  secret: string
  logger?: FastifyBaseLogger
}): FastifyInstance {
  const app = Fastify({ loggerInstance: opts.logger, bodyLimit: 65_536 })
  const { processor } = opts

  app.addHook('onRequest', async (req, reply) => {
    const header = req.headers.authorization ?? ''
    if (!timingSafeEqualText(header, `Bearer ${opts.secret}`)) {
      return reply.code(401).send({ error: 'unauthorized' })
    }
  })

  app.post<{ Body: { request: PaymentRequest } }>('/authorize', (req) => processor.authorize(req.body.request))
  app.post<{ Body: { request: PaymentRequest; reference: string; step: PayerStep; answer: PayerAnswer } }>(
    '/complete-step',
    (req) => processor.completeStep(req.body.request, req.body.reference, req.body.step, req.body.answer),
  )
  app.post<{ Body: { reference: string; amount: number; currency: string } }>('/capture', (req) =>
    processor.capture(req.body.reference, req.body.amount, req.body.currency),
  )
  app.post<{ Body: { reference: string } }>('/void', (req) => processor.void(req.body.reference))
  app.post<{ Body: { reference: string; amount: number; currency: string; refundId: string } }>('/refund', (req) =>
    processor.refund(req.body.reference, req.body.amount, req.body.currency, req.body.refundId),
  )
  app.post<{ Body: { chargeId: string } }>('/reverse', (req) => processor.reverse(req.body.chargeId))
  app.setErrorHandler((err, _req, reply) => {
    // a simulated timeout is answered as a gateway timeout, which the connector reports as one
    const timeout = err instanceof Error && 'kind' in err && err.kind === 'timeout'
    reply.code(timeout ? 504 : 500).send({ error: timeout ? 'timeout' : 'processor error' })
  })
  return app
}
