import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'

/** Where payers reach this service: the configured public URL, else the address the request used. */
export function baseUrlOf(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '')
  return `${request.protocol}://${request.host}`
}

/**
 * baseUrlOf for a new charge, whose payer may be sent to a hosted page. A live payer's link, which
 * carries the page's token, is never built from the request's Host header (whoever sends the
 * request chooses it): with a live processor (`live`), a live charge without a public URL is
 * refused. `jackdaw serve` does not start so; this holds for an app built otherwise. Without a
 * live processor the charge is refused for want of one.
 */
export function chargeBaseUrlOf(request: FastifyRequest, publicUrl: string | undefined, live: boolean): string {
  if (live && !publicUrl && request.caller?.livemode) {
    throw new AppError(
      'livemode_unavailable',
      'Live mode needs the address payers reach this service at (JACKDAW_PUBLIC_URL) for its hosted payment pages',
    )
  }
  return baseUrlOf(request, publicUrl)
}
