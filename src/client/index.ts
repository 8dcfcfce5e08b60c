/**
 * `jackdaw/client`: the typed API client, and the verifier of notify calls' signatures (which
 * needs node:crypto; a browser imports ./api.js alone).
 */

export { DEFAULT_TOLERANCE_SECONDS, SIGNATURE_HEADER, sign, verifySignature } from '../notify/signature.js'
export * from './api.js'
