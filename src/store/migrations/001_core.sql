-- Accounts, their keys, sources, customers and idempotency records.

CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  public_key_test text NOT NULL UNIQUE,
  public_key_live text NOT NULL UNIQUE,
  -- AES-256-GCM ciphertexts: the secrets must be read back to sign notify calls
  webhook_secret_test_enc text NOT NULL,
  webhook_secret_live_enc text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Every key, secret or public, is found by the SHA-256 of its full text; no secret key is kept.
CREATE TABLE api_keys (
  key_hash text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('secret', 'public')),
  livemode boolean NOT NULL,
  key_hint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE customers (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  email text NOT NULL,
  mobile_number text,
  description text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customers_list ON customers (account_id, livemode, id DESC);
CREATE INDEX customers_email ON customers (account_id, livemode, lower(email), id DESC);

CREATE TABLE sources (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  type text NOT NULL CHECK (type IN ('card', 'wallet_a', 'wallet_b', 'wallet_c', 'wallet_d',
    'cardscheme_a', 'wallet_e', 'transfer_a', 'qr_a')),
  -- what the API shows of a card: never the number or the security code
  card jsonb,
  -- AES-256-GCM ciphertexts; the security code is erased at the first authorization
  card_number_enc text,
  card_cvc_enc text,
  bank_account jsonb,
  redirect jsonb,
  owner jsonb,
  metadata jsonb,
  vaulted boolean NOT NULL DEFAULT false,
  used boolean NOT NULL DEFAULT false,
  customer_id text REFERENCES customers (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sources_customer ON sources (customer_id, id) WHERE customer_id IS NOT NULL;

CREATE TABLE idempotency_keys (
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  key text NOT NULL,
  -- keyed hash of method, path and body: a body may hold card data
  request_hash text NOT NULL,
  status_code integer,
  response_body text,
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, livemode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
