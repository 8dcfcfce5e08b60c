import type { FastifyRequest } from 'fastify'

/** Where payers reach this service: the configured public URL, else the address the request used. */
export function baseUrlOf(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '')
  return `${request.protocol}://${request.host}`
}
