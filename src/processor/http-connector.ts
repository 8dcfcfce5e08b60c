import type {
  AuthorizeOutcome,
  OperationOutcome,
  PayerAnswer,
  PayerStep,
  PaymentRequest,
  Processor,
} from './processor.js'
import { ProcessorError } from './processor.js'

/**
 * A processor reached over HTTP: the live-mode connector. It speaks the small JSON protocol of
 * src/processor/server.ts, so the simulator run as a separate process (`jackdaw processor`) can
 * stand in for a live processor, and a real processor's adapter only has to speak it too.
 */
/** How long a call to the processor may take before its outcome is taken as unknown. */
export const PROCESSOR_CALL_TIMEOUT_MS = 10_000

/**
 * Failures of fetch that come before any connection is made, so before any byte of the request
 * leaves: refused (nothing listens), no such host, or no connection within undici's connect
 * timeout. A connection that broke once made (ECONNRESET, a closed socket) is not among them: the
 * request may have arrived.
 */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'])

/** The system's or undici's code for why a fetch failed (`ECONNREFUSED`), when it gives one. */
function failureCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined
  return typeof cause?.code === 'string' ? cause.code : undefined
}

export class HttpProcessor implements Processor {
  constructor(
    private readonly baseUrl: string,
    private readonly secret: string,
    private readonly timeoutMs = PROCESSOR_CALL_TIMEOUT_MS,
  ) {}

  async #call<T>(path: string, body: unknown): Promise<T> {
    let res: Response
    try {
      res = await fetch(`${this.baseUrl.replace(/\/+$/, '')}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.secret}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
        // a redirect is an answer, not an address to send the card to
        redirect: 'manual',
      })
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
      const code = failureCode(err)
      const kind = timedOut ? 'timeout' : code && NEVER_CONNECTED.has(code) ? 'unreachable' : 'unavailable'
      throw new ProcessorError(kind, `processor ${path}: ${(err as Error).message}${code ? ` (${code})` : ''}`)
    }
    if (res.status === 504) throw new ProcessorError('timeout', `processor ${path}: upstream timeout`)
    if (res.status >= 400 && res.status < 500)
      throw new ProcessorError('refused', `processor ${path}: HTTP ${res.status}`)
    if (!res.ok) throw new ProcessorError('failed', `processor ${path}: HTTP ${res.status}`)
    try {
      return (await res.json()) as T
    } catch {
      throw new ProcessorError('failed', `processor ${path}: the answer is not JSON`)
    }
  }

  authorize(req: PaymentRequest): Promise<AuthorizeOutcome> {
    return this.#call('/authorize', { request: req })
  }

  completeStep(req: PaymentRequest, reference: string, step: PayerStep, answer: PayerAnswer) {
    return this.#call<AuthorizeOutcome | { outcome: 'otp_invalid' }>('/complete-step', {
      request: req,
      reference,
      step,
      answer,
    })
  }

  capture(reference: string, amount: number, currency: string): Promise<OperationOutcome> {
    return this.#call('/capture', { reference, amount, currency })
  }

  void(reference: string): Promise<OperationOutcome> {
    return this.#call('/void', { reference })
  }

  refund(reference: string, amount: number, currency: string, refundId: string): Promise<OperationOutcome> {
    return this.#call('/refund', { reference, amount, currency, refundId })
  }

  reverse(chargeId: string): Promise<OperationOutcome> {
    return this.#call('/reverse', { chargeId })
  }
}
