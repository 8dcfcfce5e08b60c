import sjson from 'secure-json-parse'
import { AppError, invalidParams } from '../errors.js'

// fatal: a byte sequence that is not UTF-8 is refused, not read as U+FFFD (RFC 8259: JSON
// exchanged between systems is UTF-8)
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A JSON request body, read as a client meant it or refused: an empty body is no body (clients
 * send Content-Type on bodiless POSTs); bytes that are not UTF-8, or text that is not JSON, are
 * 400 invalid_json; a key that would reach an object's prototype (`__proto__`,
 * `constructor.prototype`) is valid JSON, and is a 422 naming where it is.
 */
export function parseJsonBody(body: Buffer): unknown {
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    throw new AppError('invalid_json', 'The request body is not valid UTF-8')
  }
  if (text.trim() === '') return undefined
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch {
    const path = prototypeKeyPath(parsedOrUndefined(text))
    if (!path) throw new AppError('invalid_json', 'The request body is not valid JSON')
    throw invalidParams([
      { code: 'parameter_invalid', param: path.join('.'), msg: `${path.join('.')}: this key is not accepted anywhere` },
    ])
  }
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Where the first key that secure-json-parse forbids is, if the body has one. Iterative: a deeply
 * nested body must not exhaust the stack.
 */
function prototypeKeyPath(body: unknown): string[] | undefined {
  const stack: [unknown, string[]][] = [[body, []]]
  while (stack.length > 0) {
    const [value, path] = stack.pop() as [unknown, string[]]
    if (typeof value !== 'object' || value === null) continue
    if (Object.hasOwn(value, '__proto__')) return [...path, '__proto__']
    const ctor = Object.hasOwn(value, 'constructor') ? (value as { constructor: unknown }).constructor : undefined
    if (typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) {
      return [...path, 'constructor', 'prototype']
    }
    for (const [key, inner] of Object.entries(value).reverse()) stack.push([inner, [...path, key]])
  }
  return undefined
}
