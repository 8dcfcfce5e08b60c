import type { KeyKind } from '../domain/keys.js'
import type { Queryable } from './db.js'

export interface AccountRow {
  id: string
  name: string
  public_key_test: string
  public_key_live: string
  webhook_secret_test_enc: string
  webhook_secret_live_enc: string
  created_at: string
}

export interface KeyRow {
  account_id: string
  kind: KeyKind
  livemode: boolean
}

export interface NewKey {
  hash: string
  kind: KeyKind
  livemode: boolean
  hint: string
}

/** Answers false, and makes nothing, when another account has the seed given. */
export async function insertAccount(
  db: Queryable,
  account: Omit<AccountRow, 'created_at'>,
  keys: NewKey[],
  deterministic?: { seed: string; clockStart: string } | undefined,
): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO accounts (id, name, public_key_test, public_key_live, webhook_secret_test_enc,
       webhook_secret_live_enc, id_seed, test_clock_start) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id_seed) WHERE id_seed IS NOT NULL DO NOTHING RETURNING id`,
    [
      account.id,
      account.name,
      account.public_key_test,
      account.public_key_live,
      account.webhook_secret_test_enc,
      account.webhook_secret_live_enc,
      deterministic?.seed ?? null,
      deterministic?.clockStart ?? null,
    ],
  )
  // a seed another account has
  if (inserted.rows.length === 0) return false
  for (const k of keys) {
    await db.query(
      'INSERT INTO api_keys (key_hash, account_id, kind, livemode, key_hint) VALUES ($1, $2, $3, $4, $5)',
      [k.hash, account.id, k.kind, k.livemode, k.hint],
    )
  }
  return true
}

export async function findKey(db: Queryable, hash: string): Promise<KeyRow | undefined> {
  const res = await db.query<KeyRow>('SELECT account_id, kind, livemode FROM api_keys WHERE key_hash = $1', [hash])
  return res.rows[0]
}

export async function findAccount(db: Queryable, id: string): Promise<AccountRow | undefined> {
  const res = await db.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id])
  return res.rows[0]
}

export async function firstAccount(db: Queryable): Promise<AccountRow | undefined> {
  const res = await db.query<AccountRow>('SELECT * FROM accounts ORDER BY id LIMIT 1')
  return res.rows[0]
}

export async function updateWebhookSecret(
  db: Queryable,
  accountId: string,
  livemode: boolean,
  sealed: string,
): Promise<boolean> {
  const column = livemode ? 'webhook_secret_live_enc' : 'webhook_secret_test_enc'
  const res = await db.query(`UPDATE accounts SET ${column} = $2 WHERE id = $1`, [accountId, sealed])
  return (res.rowCount ?? 0) > 0
}

/**
 * Replaces every key of one kind and mode, so a leaked key can be rolled. False, changing nothing,
 * when no such account.
 */
export async function replaceKey(
  db: Queryable,
  accountId: string,
  key: NewKey,
  publicKeyText?: string,
): Promise<boolean> {
  const found = await db.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId])
  if (found.rows.length === 0) return false
  await db.query('DELETE FROM api_keys WHERE account_id = $1 AND kind = $2 AND livemode = $3', [
    accountId,
    key.kind,
    key.livemode,
  ])
  await db.query('INSERT INTO api_keys (key_hash, account_id, kind, livemode, key_hint) VALUES ($1, $2, $3, $4, $5)', [
    key.hash,
    accountId,
    key.kind,
    key.livemode,
    key.hint,
  ])
  if (publicKeyText) {
    const column = key.livemode ? 'public_key_live' : 'public_key_test'
    await db.query(`UPDATE accounts SET ${column} = $2 WHERE id = $1`, [accountId, publicKeyText])
  }
  return true
}

/**
 * Removes an account and everything of it: every table of its objects follows the account by
 * cascade (their foreign keys, migrations/001_baseline.sql). False when no such account.
 */
export async function deleteAccount(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query('DELETE FROM accounts WHERE id = $1', [id])
  return (res.rowCount ?? 0) > 0
}
