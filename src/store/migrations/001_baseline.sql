-- The schema of Jackdaw. Every row that points at another names it with a foreign key; every
-- closed set of values is checked.

-- The closed sets, as enum types a CHECK casts to: PostgreSQL reads a cast back from the catalog
-- more cheaply than a list of values, and the columns stay text.
CREATE TYPE source_type AS ENUM ('card', 'wallet_a', 'wallet_b', 'wallet_c', 'wallet_d', 'cardscheme_a', 'wallet_e',
  'transfer_a', 'qr_a');
CREATE TYPE charge_status AS ENUM ('pending', 'succeeded', 'failed', 'voided', 'refunded');
CREATE TYPE refund_status AS ENUM ('pending', 'succeeded', 'failed');

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

-- Lists walk the (account_id, livemode, id) indexes backwards, newest first. They are kept in
-- ascending order: a new id is the highest, and inserts at the rightmost leaf leave full pages.

CREATE TABLE customers (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  email text NOT NULL,
  mobile_number text,
  description text,
  metadata json NOT NULL DEFAULT '{}'::json,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customers_list ON customers (account_id, livemode, id);
CREATE INDEX customers_email ON customers (account_id, livemode, lower(email), id DESC);

-- The objects a row carries (a card as shown, an address, an action, a failure, metadata) are
-- json, not jsonb: the service writes and reads them whole, and nothing queries into them.
CREATE TABLE sources (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  type text NOT NULL CONSTRAINT sources_type_check CHECK (type::source_type IS NOT NULL),
  -- what the API shows of a card: never the number or the security code
  card json,
  -- AES-256-GCM ciphertexts, erased once no charge can need them (docs/api.md, card data)
  card_number_enc text,
  card_cvc_enc text,
  bank_account json,
  redirect json,
  owner json,
  metadata json,
  vaulted boolean NOT NULL DEFAULT false,
  used boolean NOT NULL DEFAULT false,
  customer_id text REFERENCES customers (id) ON DELETE SET NULL,
  -- the Idempotency-Key of the request that made it: a retry after a crash finds it
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sources_customer ON sources (customer_id, id) WHERE customer_id IS NOT NULL;
CREATE INDEX sources_idempotency ON sources (account_id, livemode, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- How far a sweep has gone through a table in id order (ids sort by creation time), so that a
-- restarted process goes on from there rather than from the start.
CREATE TABLE sweep_positions (
  name text PRIMARY KEY,
  position text NOT NULL
);

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

CREATE TABLE charges (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  source_id text NOT NULL REFERENCES sources (id),
  customer_id text REFERENCES customers (id) ON DELETE SET NULL,
  -- the amount shown: the authorized amount, or after a partial capture the captured amount
  amount bigint NOT NULL CHECK (amount > 0),
  amount_authorized bigint NOT NULL CHECK (amount_authorized > 0),
  amount_refunded bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
  currency text NOT NULL,
  description text NOT NULL,
  statement_descriptor text NOT NULL,
  status text NOT NULL CONSTRAINT charges_status_check CHECK (status::charge_status IS NOT NULL),
  authorized boolean NOT NULL DEFAULT false,
  captured boolean NOT NULL DEFAULT false,
  capture boolean NOT NULL,
  require_auth boolean NOT NULL,
  -- what the service is doing with the processor right now: an operation recorded before the
  -- call and cleared with its outcome, so two operations never overlap
  processing text,
  action json,
  action_token text,
  otp_attempts integer NOT NULL DEFAULT 0,
  processor_ref text,
  failure_data json,
  metadata json NOT NULL DEFAULT '{}'::json,
  -- the Idempotency-Key of the create request, and of the capture or void that last began on it
  idempotency_key text,
  operation_key text,
  -- when a reversal of an authorization never answered was last asked for; NULL when none is owed
  reversal_asked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX charges_list ON charges (account_id, livemode, id);
CREATE INDEX charges_source ON charges (source_id);
CREATE INDEX charges_customer ON charges (customer_id) WHERE customer_id IS NOT NULL;
CREATE INDEX charges_idempotency ON charges (account_id, livemode, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- what the recovery sweep looks for: an operation under way (its process may have died) or a
-- payer's step (the payer may never answer)
CREATE INDEX charges_unsettled ON charges (updated_at) WHERE processing IS NOT NULL OR action IS NOT NULL;
CREATE INDEX charges_reversals_owed ON charges (reversal_asked_at) WHERE reversal_asked_at IS NOT NULL;

CREATE TABLE refunds (
  id text PRIMARY KEY,
  charge_id text NOT NULL REFERENCES charges (id) ON DELETE CASCADE,
  amount bigint NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  reason text NOT NULL,
  status text NOT NULL CONSTRAINT refunds_status_check CHECK (status::refund_status IS NOT NULL),
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_charge ON refunds (charge_id, id);
CREATE INDEX refunds_idempotency ON refunds (charge_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX refunds_pending ON refunds (updated_at) WHERE status = 'pending';

CREATE TABLE events (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  type text NOT NULL,
  charge_id text REFERENCES charges (id) ON DELETE CASCADE,
  -- the object as it was when the event happened
  data json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_list ON events (account_id, livemode, id);
CREATE INDEX events_charge ON events (charge_id);

-- Notify calls: an outbox of deliveries, queued in the transaction that records their event, and
-- every attempt made to send one.
CREATE TABLE deliveries (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  event_type text NOT NULL,
  url text NOT NULL,
  -- the body fixed when queued, so every attempt sends the same bytes
  payload text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  -- claims made so far; a claim that never reported an outcome still counts, so a payload that
  -- takes workers down cannot be retried for ever
  attempt_count integer NOT NULL DEFAULT 0,
  -- false for a redelivery on demand: one attempt, no schedule
  retry boolean NOT NULL DEFAULT true,
  -- when a pending delivery is due; while a worker holds it, when its lease runs out
  next_attempt_at timestamptz,
  -- set while a worker holds the delivery; only that worker's outcome moves it on
  lease_token text,
  claimed_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_list ON deliveries (account_id, livemode, id);
CREATE INDEX deliveries_event ON deliveries (event_id);

CREATE TABLE delivery_attempts (
  delivery_id text NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number integer NOT NULL CHECK (number > 0),
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  -- the HTTP status answered, or null when none came (network error, timeout, refused address)
  status_code integer,
  error text,
  succeeded boolean NOT NULL,
  PRIMARY KEY (delivery_id, number)
);
