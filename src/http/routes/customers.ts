import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { IdParams, ListOf, ListQuery, NoBody, NoQuery, withErrors } from '../../schemas/common.js'
import {
  AttachSourceBody,
  CreateCustomerBody,
  Customer,
  DeletedCustomer,
  EmailParams,
  UpdateCustomerBody,
} from '../../schemas/customer.js'
import { customerBodyViolations } from '../../services/customers.js'
import type { Services } from '../../services/index.js'
import { pageOf } from '../lists.js'

const CustomerParams = IdParams('cus_id', 'cus_')
const CustomerSourceParams = Type.Object({
  ...CustomerParams.properties,
  ...IdParams('src_id', 'src_').properties,
})
const tags = ['customers']

export const customerRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const customers = services.customers

  app.post(
    '/v2/customers/',
    {
      // the second argument of body rules is the key's mode, not the field's name
      config: { bodyRules: (body) => customerBodyViolations(body) },
      schema: {
        tags,
        operationId: 'createCustomer',
        summary: 'Create a customer',
        body: CreateCustomerBody,
        response: withErrors({ 201: Customer }),
      },
    },
    async (req, reply) =>
      reply.code(201).send(await customers.create(req.caller, req.body, req.idempotencyClaim?.requestKey)),
  )

  app.get(
    '/v2/customers/',
    {
      schema: {
        tags,
        operationId: 'listCustomers',
        summary: 'List customers, newest first',
        querystring: ListQuery,
        response: withErrors({ 200: ListOf(Customer) }),
      },
    },
    (req) => pageOf('/v2/customers/', req.query, (page) => customers.list(req.caller, page)),
  )

  app.get(
    '/v2/customers/by_email/:email',
    {
      schema: {
        tags,
        operationId: 'retrieveCustomerByEmail',
        querystring: NoQuery,
        summary: 'The newest customer with an email',
        params: EmailParams,
        response: withErrors({ 200: Customer }),
      },
    },
    (req) => customers.byEmail(req.caller, req.params.email),
  )

  app.get(
    '/v2/customers/:cus_id',
    {
      schema: {
        tags,
        operationId: 'retrieveCustomer',
        querystring: NoQuery,
        summary: 'Retrieve a customer',
        params: CustomerParams,
        response: withErrors({ 200: Customer }),
      },
    },
    (req) => customers.get(req.caller, req.params.cus_id),
  )

  app.put(
    '/v2/customers/:cus_id',
    {
      schema: {
        tags,
        operationId: 'updateCustomer',
        summary: 'Update a customer',
        description: 'Fields left out keep their value; `metadata` replaces the whole object; the email cannot change.',
        params: CustomerParams,
        body: UpdateCustomerBody,
        response: withErrors({ 200: Customer }),
      },
    },
    (req) => customers.update(req.caller, req.params.cus_id, req.body),
  )

  app.delete(
    '/v2/customers/:cus_id',
    {
      config: { bodyOptional: true },
      schema: {
        tags,
        operationId: 'deleteCustomer',
        summary: 'Delete a customer',
        params: CustomerParams,
        body: NoBody,
        response: withErrors({ 200: DeletedCustomer }),
      },
    },
    (req) => customers.remove(req.caller, req.params.cus_id),
  )

  app.post(
    '/v2/customers/:cus_id/sources',
    {
      schema: {
        tags,
        operationId: 'attachSource',
        summary: 'Attach a source',
        description:
          'Consumes the source: it becomes used and vaulted, and can then be charged again with this customer.',
        params: CustomerParams,
        body: AttachSourceBody,
        response: withErrors({ 200: Customer }),
      },
    },
    (req) => customers.attach(req.caller, req.params.cus_id, req.body.source, req.idempotencyClaim?.requestKey),
  )

  app.delete(
    '/v2/customers/:cus_id/sources/:src_id',
    {
      config: { bodyOptional: true },
      schema: {
        tags,
        operationId: 'detachSource',
        summary: 'Detach a source',
        params: CustomerSourceParams,
        body: NoBody,
        response: withErrors({ 200: Customer }),
      },
    },
    (req) => customers.detach(req.caller, req.params.cus_id, req.params.src_id),
  )
}
