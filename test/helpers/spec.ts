/**
 * Facts of the interface (../shared/spec/payment-service-interface.md), written here from the
 * spec and not imported from src, so that tests hold the code to the spec.
 */

/** The source type enumeration: exactly nine values, in this order. */
export const SPEC_SOURCE_TYPES = [
  'card',
  'wallet_a',
  'wallet_b',
  'wallet_c',
  'wallet_d',
  'cardscheme_a',
  'wallet_e',
  'transfer_a',
  'qr_a',
] as const

/** Every type but `card`: these need a redirect and pay through a hosted page. */
export const SPEC_REDIRECT_TYPES = SPEC_SOURCE_TYPES.filter((type) => type !== 'card')
