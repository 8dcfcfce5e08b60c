import type { Vault } from '../crypto/vault.js'
import { newId } from '../domain/ids.js'
import { hashApiKey, type KeyKind, keyHint, newApiKey, newWebhookSecret, parseApiKey } from '../domain/keys.js'
import { DETERMINISTIC_CLOCK_START } from '../domain/time.js'
import { AppError, invalidParams, notFound } from '../errors.js'
import * as accounts from '../store/accounts.js'
import type { Db } from '../store/db.js'
import type { Scope } from '../store/scope.js'

export interface AccountKeys {
  id: string
  name: string
  sk_test_key: string
  pk_test_key: string
  sk_live_key: string
  pk_live_key: string
  webhook_secret_test: string
  webhook_secret_live: string
}

export interface Caller extends Scope {
  keyKind: KeyKind
}

/**
 * What authenticate asks around a lookup of a well-formed key it has not cached, with the client
 * that sent the key (its address, for http/auth-failures.ts). A lookup counts against the client
 * from before it starts, so that requests sent together cannot all pass the count before any of
 * them has added to it; a key found gives its count back.
 */
export interface KeyLookupGuard {
  /** before the lookup; throws to refuse the request without it */
  reserve(client: KeyClient): Promise<void>
  /** the key was found, or the lookup failed: it does not count */
  release(client: KeyClient): Promise<void>
}

/**
 * Who sent a key: the request itself, whose address is worked out only when a key is looked up
 * (behind a trusted proxy that means reading X-Forwarded-For), not on every request.
 */
export interface KeyClient {
  readonly ip: string
}

/**
 * Keys are looked up on every request; a found key is taken on trust briefly to spare the store,
 * and remembered after that as one that was valid (authenticate).
 */
const KEY_CACHE_MS = 5_000

export function accountService(deps: { db: Db; vault: Vault }) {
  const { db, vault } = deps
  const keyCache = new Map<string, { caller: Caller; until: number }>()

  /**
   * With `deterministic`, the account's test-mode ids come from the seed and its test clock starts
   * at DETERMINISTIC_CLOCK_START and stands still between advances; its keys and secrets are
   * random all the same.
   */
  async function create(name: string, deterministic?: { seed: string | number }): Promise<AccountKeys> {
    const keys = {
      sk_test_key: newApiKey('secret', false),
      pk_test_key: newApiKey('public', false),
      sk_live_key: newApiKey('secret', true),
      pk_live_key: newApiKey('public', true),
    }
    const secrets = { test: newWebhookSecret(), live: newWebhookSecret() }
    const id = newId('account')
    const made = await db.transaction((tx) =>
      accounts.insertAccount(
        tx,
        {
          id,
          name,
          public_key_test: keys.pk_test_key,
          public_key_live: keys.pk_live_key,
          webhook_secret_test_enc: vault.encrypt(secrets.test),
          webhook_secret_live_enc: vault.encrypt(secrets.live),
        },
        Object.values(keys).map((key) => {
          const parsed = parseApiKey(key) as NonNullable<ReturnType<typeof parseApiKey>>
          return { hash: hashApiKey(key), kind: parsed.kind, livemode: parsed.livemode, hint: keyHint(key) }
        }),
        deterministic && { seed: String(deterministic.seed), clockStart: DETERMINISTIC_CLOCK_START },
      ),
    )
    if (!made) {
      throw invalidParams([
        {
          code: 'parameter_invalid',
          param: 'seed',
          msg: 'Another account has this seed: a seed makes the same ids in every account, and an id names one object; pick another seed (or run the replay on a service of its own)',
        },
      ])
    }
    return { id, name, ...keys, webhook_secret_test: secrets.test, webhook_secret_live: secrets.live }
  }

  /** `hash` is the key's, when the caller has it already (http/auth.ts). */
  const lookups = new Map<string, ReturnType<typeof countedLookup>>()

  /** A key's lookup, counted against its client until the key is found (KeyLookupGuard). */
  async function countedLookup(hash: string, counted: KeyLookupGuard | undefined, client: KeyClient) {
    await counted?.reserve(client)
    try {
      const row = await accounts.findKey(db, hash)
      if (row) await counted?.release(client)
      return row
    } catch (err) {
      await counted?.release(client)
      throw err
    }
  }

  async function authenticate(
    key: string,
    hash = hashApiKey(key),
    guard?: KeyLookupGuard,
    client: KeyClient = { ip: '' },
  ): Promise<Caller> {
    const parsed = parseApiKey(key)
    if (!parsed) throw new AppError('api_key_invalid', 'Invalid API key provided')
    const now = Date.now()
    const cached = keyCache.get(hash)
    if (cached && cached.until > now) return cached.caller
    // a key found before is looked up again once its entry is stale, but never refused as unknown:
    // an integration that works is not shut out by other clients at its address
    const counted = cached ? undefined : guard
    // requests sent at once with one key share its lookup, and count once: a burst of a valid
    // key's requests, right after a start, is not taken for a client guessing keys
    let lookup = lookups.get(hash)
    const mine = lookup === undefined
    if (lookup === undefined) {
      lookup = countedLookup(hash, counted, client)
      lookups.set(hash, lookup)
      const settled = () => lookups.delete(hash)
      lookup.then(settled, settled)
    }
    let row: Awaited<ReturnType<typeof accounts.findKey>>
    try {
      row = await lookup
    } catch (err) {
      // the sender of the shared lookup was refused for its own address, not this one
      if (mine || !(err instanceof AppError && err.code === 'rate_limited')) throw err
      row = await countedLookup(hash, counted, client)
    }
    if (!row) {
      keyCache.delete(hash)
      throw new AppError('api_key_invalid', 'Invalid API key provided')
    }
    const caller: Caller = { accountId: row.account_id, livemode: row.livemode, keyKind: row.kind }
    if (keyCache.size > 10_000) keyCache.clear()
    keyCache.set(hash, { caller, until: now + KEY_CACHE_MS })
    return caller
  }

  async function me(scope: Scope) {
    const row = await accounts.findAccount(db, scope.accountId)
    if (!row) throw new AppError('api_key_invalid', 'Invalid API key provided')
    return {
      object: 'account' as const,
      id: row.id,
      name: row.name,
      livemode: scope.livemode,
      pk_test_key: row.public_key_test,
      pk_live_key: row.public_key_live,
      webhook_secret: vault.decrypt(scope.livemode ? row.webhook_secret_live_enc : row.webhook_secret_test_enc),
      created_at: row.created_at,
    }
  }

  async function rollWebhookSecret(scope: Scope): Promise<string> {
    const secret = newWebhookSecret()
    if (!(await accounts.updateWebhookSecret(db, scope.accountId, scope.livemode, vault.encrypt(secret)))) {
      throw notFound('account', scope.accountId)
    }
    return secret
  }

  /** Issues a new key of one kind and mode; the old one stops working at once. */
  async function rollKey(accountId: string, kind: KeyKind, livemode: boolean): Promise<string> {
    const key = newApiKey(kind, livemode)
    const replaced = await db.transaction((tx) =>
      accounts.replaceKey(
        tx,
        accountId,
        { hash: hashApiKey(key), kind, livemode, hint: keyHint(key) },
        kind === 'public' ? key : undefined,
      ),
    )
    if (!replaced) throw notFound('account', accountId)
    keyCache.clear()
    return key
  }

  /** Removes an account and all of it; its keys stop working at once here, within 5 seconds elsewhere. */
  async function remove(id: string) {
    const removed = await accounts.deleteAccount(db, id)
    keyCache.clear()
    if (!removed) throw notFound('account', id)
    return { id, object: 'account' as const, deleted: true as const }
  }

  return {
    create,
    authenticate,
    me,
    rollWebhookSecret,
    rollKey,
    remove,
    first: () => accounts.firstAccount(db),
  }
}

export type AccountService = ReturnType<typeof accountService>
