/**
 * Why a payer's browser may not be sent to `address` from a hosted page, or undefined when it
 * may: an absolute https address with a host and no credentials, or http in test mode. Without a
 * mode (a body whose schema failed, checked before its key's mode is at hand), http passes and
 * the service checks again. Other schemes (`intent:`, `blob:`, `javascript:`) and forms a browser
 * reads as relative (`http:evil.example`) are refused.
 */
export function redirectAddressProblem(param: string, address: string, livemode?: boolean): string | undefined {
  const wanted = livemode ? 'an https URL' : 'an https URL (or http, in test mode)'
  if (!/^https?:\/\/[^/?#\\]/i.test(address)) return `${param} must be ${wanted}`
  let parsed: URL
  try {
    parsed = new URL(address)
  } catch {
    return `${param} must be ${wanted}`
  }
  // `https://:@host` has empty credentials, which URL does not report: any `@` before the host
  const authority = address.slice(address.indexOf('//') + 2).split(/[/?#\\]/)[0] as string
  if (parsed.username || parsed.password || authority.includes('@')) return `${param} must not carry credentials`
  if (livemode && parsed.protocol !== 'https:') return `${param} must be an https URL in live mode`
  return undefined
}
