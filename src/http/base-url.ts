import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'

/**
 * Where payers reach this service: the configured public URL, else, in test mode only, the
 * address the request used. A live payer's link is never built from the request's Host header,
 * which whoever sends the request chooses: a live request that needs one without a public URL is
 * refused.
 */
export function baseUrlOf(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '')
  if (request.caller?.livemode) {
    throw new AppError(
      'livemode_unavailable',
      'Live mode needs the address payers reach this service at (JACKDAW_PUBLIC_URL) for its hosted payment pages',
    )
  }
  return `${request.protocol}://${request.host}`
}
