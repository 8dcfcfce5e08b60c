import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'
import { FAULT_HEADER, PROCESSOR_FAULTS } from '../schemas/test-faults.js'
import {
  operationOfRoute,
  parseFaultHeader,
  runWithFault,
  type TestFault,
  type TestFaultService,
} from '../services/test-faults.js'

declare module 'fastify' {
  interface FastifyRequest {
    testFault?: TestFault | undefined
  }
}

const HEADER = FAULT_HEADER.toLowerCase()

/**
 * Decides a test-mode request's fault, from its Jackdaw-Test-Fault header or the account's rules,
 * before its Idempotency-Key is claimed (registered before registerIdempotency): a refused header,
 * like a real rate limit, then uses no key up.
 */
export function registerFaultDecision(app: FastifyInstance, faults: TestFaultService) {
  app.addHook('preValidation', async (request) => {
    const caller = request.caller
    if (!caller) return
    const sent = request.headers[HEADER]
    let fault: TestFault | undefined
    if (sent !== undefined) {
      if (caller.livemode) {
        throw new AppError('test_mode_only', `${FAULT_HEADER} works with test keys only`, { param: FAULT_HEADER })
      }
      if (request.routeOptions.config.refusesTestFaults) {
        throw new AppError(
          'header_invalid',
          `A scenario makes its own outcomes: ${FAULT_HEADER} does not apply to it`,
          {
            param: FAULT_HEADER,
          },
        )
      }
      fault = parseFaultHeader(Array.isArray(sent) ? sent.join(',') : sent)
    } else if (!caller.livemode) {
      const operation = operationOfRoute(request.method, request.routeOptions.url)
      if (operation) fault = await faults.drawn(caller, operation)
    }
    if (fault?.name === 'rate_limited') {
      throw new AppError('rate_limited', `Too many requests (${FAULT_HEADER} rate_limited); retry after 1 second`, {
        headers: { 'Retry-After': '1' },
      })
    }
    request.testFault = fault
  })
}

/**
 * Makes a request's fault happen where a real one would, after its Idempotency-Key is claimed
 * (registered after registerIdempotency): an error before the handler writes anything, the
 * processor calls of its handler, or its answer lost once its idempotency record holds it.
 */
export function registerFaultEffects(app: FastifyInstance) {
  // a callback, not a promise: the handler then runs within the fault's context
  app.addHook('preHandler', (request, _reply, done) => {
    const fault = request.testFault
    if (!fault) return done()
    if (fault.name === 'error_before_commit') {
      return done(
        new AppError(
          'internal_error',
          `An error occurred before anything was written (${FAULT_HEADER} error_before_commit)`,
        ),
      )
    }
    if (PROCESSOR_FAULTS.includes(fault.name)) return runWithFault(fault, () => done())
    done()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.testFault?.name !== 'lost_response') return done(null, payload)
    // the answer is kept (the idempotency hook, before this one, has stored it): the connection
    // goes without it, as when the network drops after the work is done
    reply.raw.destroy()
    done(null, payload)
  })
}
