import fc from 'fast-check'
import { TEST_CARDS } from '../../src/domain/card.js'
import {
  FAULT_NAMES,
  FAULT_OPERATIONS,
  type FaultOperation,
  MAX_FAULT_LATENCY_MS,
  MAX_NOTIFY_HOLD_SECONDS,
  NOTIFY_FAULTS,
  PROCESSOR_FAULTS,
  PROCESSOR_OPERATIONS,
} from '../../src/schemas/test-faults.js'
import { SPEC_SOURCE_TYPES } from './spec.js'

/**
 * fast-check arbitraries of valid bodies, within the interface's bounds and pattern P, for the
 * properties that must accept them.
 */

export const P_CHARS = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  "'",
  '#',
  '_',
  '.',
  '-',
  ',',
  ' ',
  '\t',
]
export const pChar = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...P_CHARS.slice(0, 62)) },
  { weight: 2, arbitrary: fc.constantFrom("'", '#', '_', '.', '-', ',', ' ') },
  { weight: 1, arbitrary: fc.constantFrom(' ', '\t') },
)
/** A string matching pattern P, between min and max characters. */
export const textP = (min: number, max: number) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: pChar, minLength: min, maxLength: Math.min(max, 40) }) },
    { weight: 1, arbitrary: fc.string({ unit: pChar, minLength: Math.max(min, max - 3), maxLength: max }) },
  )

/** Text of any Unicode scalar values except NUL (which no store keeps). */
export const storableText = (min: number, max: number) =>
  fc
    .string({ unit: 'binary', minLength: min, maxLength: max })
    .map((s) => s.replaceAll('\u0000', ' '))
    .filter((s) => [...s].length >= min)

export const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n })

export function luhnComplete(body: number[]): string {
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    let d = body[body.length - 1 - i] as number
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return `${body.join('')}${(10 - (sum % 10)) % 10}`
}

export const cardNumber = fc.oneof(
  fc.constantFrom(...TEST_CARDS.map((c) => c.number)),
  fc.integer({ min: 12, max: 19 }).chain((n) => digits(n - 1).map(luhnComplete)),
)

export const now = new Date()
export const THIS_YEAR = now.getUTCFullYear()
export const THIS_MONTH = now.getUTCMonth() + 1

export const futureExpiry = fc
  .tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 12 }), fc.boolean())
  .map(([years, m, pad]) => {
    const month = years === 0 ? Math.max(m, THIS_MONTH) : m
    return { exp_month: pad ? String(month).padStart(2, '0') : String(month), exp_year: String(THIS_YEAR + years) }
  })

export const cardInput = fc
  .record(
    {
      name: textP(1, 50),
      number: cardNumber,
      expiry: futureExpiry,
      cvc: fc.integer({ min: 3, max: 4 }).chain((n) => digits(n).map((d) => d.join(''))),
      address_line1: textP(1, 255),
      address_line2: textP(1, 255),
      address_city: textP(1, 255),
      address_state: textP(1, 255),
      address_country: textP(1, 255),
      address_zip: textP(1, 50),
    },
    { requiredKeys: ['name', 'number', 'expiry', 'cvc'] },
  )
  .map(({ expiry, ...card }) => ({ ...card, ...expiry }))

export const email = fc
  .tuple(
    fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,20}[a-z0-9]$/),
    fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/),
    fc.constantFrom('com', 'example', 'co', 'ph', 'museum'),
  )
  .map(([local, domain, tld]) => `${local.replace(/\.\.+/g, '.')}@${domain}.${tld}`)

export const uri = fc.webUrl({ withQueryParameters: true, withFragments: true }).filter((u) => u.length <= 2083)
/** A payer is sent to https addresses only in live mode (docs/api.md, sources). */
const httpsUri = uri.map((u) => u.replace(/^http:/, 'https:')).filter((u) => u.length <= 2083)

export const address = fc.record(
  {
    name: textP(1, 50),
    phone_number: textP(1, 50),
    email,
    line1: textP(1, 255),
    line2: textP(1, 255),
    city: textP(1, 100),
    state: textP(1, 50),
    country: textP(1, 50),
    zip_code: textP(1, 50),
  },
  { requiredKeys: ['name'] },
)

export const owner = fc.record(
  { billing: address, shipping: address, name: storableText(0, 50), address_country: textP(1, 50) },
  { requiredKeys: [] },
)
/** A valid create-source body: card sources carry a card, the others a redirect (docs). */
export const validSourceBody = (withNotify: boolean, livemode = false) =>
  fc.constantFrom(...SPEC_SOURCE_TYPES).chain((type) =>
    fc
      .record(
        {
          card: cardInput,
          redirect: fc.record(
            {
              success: livemode ? httpsUri : uri,
              fail: livemode ? httpsUri : uri,
              ...(withNotify ? { notify: uri } : {}),
            },
            { requiredKeys: ['success', 'fail'] },
          ),
          owner,
          withRedirect: fc.boolean(),
          withOwner: fc.boolean(),
        },
        { requiredKeys: ['card', 'redirect', 'owner', 'withRedirect', 'withOwner'] },
      )
      .map(({ card, redirect, owner: o, withRedirect, withOwner }) => {
        const body: Record<string, unknown> = { type }
        if (type === 'card') body.card = card
        if (type !== 'card' || withRedirect) body.redirect = redirect
        if (withOwner) body.owner = o
        return body
      }),
  )

export const metadata = fc.dictionary(
  storableText(1, 40),
  fc.oneof(storableText(0, 500), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean()),
  { maxKeys: 5 },
)

const rate = fc.double({ min: 0, max: 1, noNaN: true })

/**
 * One fault rule of PUT /v2/test/faults (docs/testing.md): an operation that fails (a processor
 * fault only on an operation that calls the processor; a latency with processor_latency), or
 * notify calls that misbehave (a hold in seconds with delay and reorder).
 */
export const faultRule: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constantFrom(...FAULT_NAMES).chain((fault) =>
    fc.record(
      {
        operation: fc.constantFrom(
          ...(PROCESSOR_FAULTS.includes(fault)
            ? PROCESSOR_OPERATIONS
            : (Object.keys(FAULT_OPERATIONS) as FaultOperation[])),
        ),
        fault: fc.constant(fault),
        ...(fault === 'processor_latency' ? { latency_ms: fc.integer({ min: 0, max: MAX_FAULT_LATENCY_MS }) } : {}),
        rate,
      },
      { requiredKeys: ['operation', 'fault'] },
    ),
  ),
  fc.constantFrom(...NOTIFY_FAULTS).chain((notify) =>
    fc.record(
      {
        notify: fc.constant(notify),
        ...(notify === 'duplicate' ? {} : { seconds: fc.integer({ min: 1, max: MAX_NOTIFY_HOLD_SECONDS }) }),
        rate,
      },
      { requiredKeys: ['notify'] },
    ),
  ),
)
