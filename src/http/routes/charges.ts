import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CaptureBody,
  Charge,
  ChargeListQuery,
  CreateChargeBody,
  RefundBody,
  TestAuthorizeBody,
  VerifyBody,
} from '../../schemas/charge.js'
import { IdParams, ListOf, NoBody, NoQuery, withErrors } from '../../schemas/common.js'
import { chargeBodyViolations } from '../../services/charges/index.js'
import type { Services } from '../../services/index.js'
import { chargeBaseUrlOf } from '../base-url.js'
import { pageOf } from '../lists.js'
import { TEST_MODE_TAG } from './accounts.js'
import { hostedPageUrl, hostedPageUrlOf } from './hosted.js'

const Params = IdParams('ch_id', 'ch_')
const tags = ['charges']

export const chargeRoutes: FastifyPluginAsyncTypebox<{
  services: Services
  publicUrl?: string | undefined
  /** a live processor is configured: live charges then need the public URL (chargeBaseUrlOf) */
  live: boolean
}> = async (app, { services, publicUrl, live }) => {
  const charges = services.charges

  app.post(
    '/v2/charges/',
    {
      config: { bodyRules: chargeBodyViolations },
      schema: {
        tags,
        operationId: 'createCharge',
        summary: 'Create a charge',
        description:
          'Consumes a single-use source, or charges a vaulted one with its `customer`. A declined payment is not an HTTP error: the answer is 201 with `status: failed` and `failure_data`.',
        body: CreateChargeBody,
        response: withErrors({ 201: Charge }),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          await charges.create(
            req.caller,
            req.body,
            hostedPageUrl(chargeBaseUrlOf(req, publicUrl, live)),
            req.idempotencyClaim?.requestKey,
          ),
        ),
  )

  app.get(
    '/v2/charges/',
    {
      schema: {
        tags,
        operationId: 'listCharges',
        summary: 'List charges, newest first',
        description: 'With `status`, only the charges in that status.',
        querystring: ChargeListQuery,
        response: withErrors({ 200: ListOf(Charge) }),
      },
    },
    (req) =>
      pageOf('/v2/charges/', req.query, (page) => charges.list(req.caller, page, req.query.status), {
        status: req.query.status,
      }),
  )

  app.get(
    '/v2/charges/:ch_id',
    {
      schema: {
        tags,
        operationId: 'retrieveCharge',
        querystring: NoQuery,
        summary: 'Retrieve a charge',
        params: Params,
        response: withErrors({ 200: Charge }),
      },
    },
    (req) => charges.get(req.caller, req.params.ch_id),
  )

  app.post(
    '/v2/charges/:ch_id/capture',
    {
      config: { bodyOptional: true },
      schema: {
        tags,
        operationId: 'captureCharge',
        summary: 'Capture an authorized charge',
        description: 'A partial capture releases the rest: `amount` becomes the captured amount.',
        params: Params,
        body: CaptureBody,
        response: withErrors({ 200: Charge }),
      },
    },
    (req) => charges.capture(req.caller, req.params.ch_id, req.body.amount, req.idempotencyClaim?.requestKey),
  )

  app.post(
    '/v2/charges/:ch_id/void',
    {
      config: { bodyOptional: true },
      schema: {
        tags,
        operationId: 'voidCharge',
        summary: 'Void an authorized, uncaptured charge',
        params: Params,
        body: NoBody,
        response: withErrors({ 200: Charge }),
      },
    },
    (req) => charges.void(req.caller, req.params.ch_id, req.idempotencyClaim?.requestKey),
  )

  app.post(
    '/v2/charges/:ch_id/refund',
    {
      config: { bodyOptional: true },
      schema: {
        tags,
        operationId: 'refundCharge',
        summary: 'Refund a captured charge, in whole or in part',
        params: Params,
        body: RefundBody,
        response: withErrors({ 200: Charge }),
      },
    },
    (req) => charges.refund(req.caller, req.params.ch_id, req.body, req.idempotencyClaim?.requestKey),
  )

  app.post(
    '/v2/charges/:ch_id/verify',
    {
      schema: {
        tags,
        operationId: 'verifyCharge',
        summary: 'Confirm a bank-account charge with the one-time password',
        params: Params,
        body: VerifyBody,
        response: withErrors({ 200: Charge }),
      },
    },
    (req) => charges.verify(req.caller, req.params.ch_id, req.body, hostedPageUrlOf(req, publicUrl)),
  )

  app.post(
    '/v2/test/charges/:ch_id/authorize',
    {
      schema: {
        tags: [TEST_MODE_TAG],
        operationId: 'testAuthorizeCharge',
        summary: 'Answer a pending charge as the payer would on its hosted page (test keys only)',
        params: Params,
        body: TestAuthorizeBody,
        response: withErrors({ 200: Charge }),
      },
    },
    (req) =>
      charges.testDecide(
        req.caller,
        req.params.ch_id,
        req.body.decision === 'approve',
        hostedPageUrlOf(req, publicUrl),
      ),
  )
}
