import { type Config, ConfigError } from '../config.js'
import { HttpProcessor, PROCESSOR_CALL_TIMEOUT_MS } from './http-connector.js'
import type { Processor } from './processor.js'

/**
 * The live processor the configuration names, undefined when it names none. Refuses a setting that
 * would send card data or payers' tokens in the clear, or let the recovery sweep repeat a call
 * still under way.
 */
export function liveProcessorOf(config: Config): Processor | undefined {
  if (!config.JACKDAW_LIVE_PROCESSOR_URL) return undefined
  if (!config.JACKDAW_LIVE_PROCESSOR_SECRET) {
    throw new ConfigError('JACKDAW_LIVE_PROCESSOR_SECRET is required with JACKDAW_LIVE_PROCESSOR_URL')
  }
  // card numbers and security codes travel to it: in the clear only within this machine
  const url = new URL(config.JACKDAW_LIVE_PROCESSOR_URL)
  if (url.protocol !== 'https:' && !LOOPBACK_HOST.test(url.hostname)) {
    throw new ConfigError(
      `JACKDAW_LIVE_PROCESSOR_URL must use https (card data is sent to it), or name this machine (localhost, 127.0.0.1, [::1]); it names ${url.hostname}`,
    )
  }
  // a payer's hosted link carries its token: in live mode it is never built from a request's Host
  // header, which whoever sends the request chooses
  if (!config.JACKDAW_PUBLIC_URL) {
    throw new ConfigError(
      'JACKDAW_PUBLIC_URL is required with JACKDAW_LIVE_PROCESSOR_URL: live payers are sent to hosted pages at that address',
    )
  }
  const publicUrl = new URL(config.JACKDAW_PUBLIC_URL)
  if (publicUrl.protocol !== 'https:' && !LOOPBACK_HOST.test(publicUrl.hostname)) {
    throw new ConfigError(
      `JACKDAW_PUBLIC_URL must use https in live mode (payers' links carry a token), or name this machine; it names ${publicUrl.hostname}`,
    )
  }
  // the sweep takes an operation older than its grace for one a dead process left, and sends it again
  if (config.JACKDAW_RECOVERY_GRACE_MS <= PROCESSOR_CALL_TIMEOUT_MS) {
    throw new ConfigError(
      `JACKDAW_RECOVERY_GRACE_MS must be longer than a call to the live processor may take (${PROCESSOR_CALL_TIMEOUT_MS} ms): the recovery sweep would send again an operation still under way`,
    )
  }
  return new HttpProcessor(config.JACKDAW_LIVE_PROCESSOR_URL, config.JACKDAW_LIVE_PROCESSOR_SECRET)
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i
