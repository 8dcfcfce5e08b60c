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
  created_at timestamptz NOT NULL DEFAULT now(),
  -- how far the account's test-mode time runs ahead of the real time; it only moves forward
  -- (POST /v2/test/clock/advance), a hundred years (of 365 days) at most
  test_clock_offset_seconds bigint NOT NULL DEFAULT 0
    CHECK (test_clock_offset_seconds >= 0 AND test_clock_offset_seconds <= 3153600000),
  -- a deterministic account's test clock does not run: it starts here and moves only when advanced
  test_clock_start timestamptz,
  -- a deterministic account's test-mode ids are made from its seed and a counter of ids made so
  -- far, kept here so that every process counts on from the same place
  id_seed text,
  id_counter bigint NOT NULL DEFAULT 0
);
-- the accounts whose test-mode time is not the real time, which sweeps look at besides
CREATE INDEX accounts_clock_apart ON accounts (id) WHERE test_clock_offset_seconds > 0 OR test_clock_start IS NOT NULL;
-- ids are unique across accounts, and one seed makes the same ids in every account
CREATE UNIQUE INDEX accounts_id_seed ON accounts (id_seed) WHERE id_seed IS NOT NULL;

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
  -- the Idempotency-Key of the request that made it: a retry after a lost answer finds it
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customers_list ON customers (account_id, livemode, id);
CREATE INDEX customers_email ON customers (account_id, livemode, lower(email), id DESC);
CREATE INDEX customers_idempotency ON customers (account_id, livemode, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

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
  -- the Idempotency-Key of the request that attached it: a retry of that request is answered
  attach_key text,
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

-- The test-clock advances made by requests with an Idempotency-Key: a retry of one whose answer
-- was lost finds it here and moves the clock no further. Gone with the key's record.
CREATE TABLE test_clock_advances_made (
  account_id text NOT NULL,
  livemode boolean NOT NULL,
  key text NOT NULL,
  PRIMARY KEY (account_id, livemode, key),
  FOREIGN KEY (account_id, livemode, key) REFERENCES idempotency_keys (account_id, livemode, key) ON DELETE CASCADE
);

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
  -- when that operation began, by the real time whatever the account's test clock says: whether
  -- the process doing it may still be at work is a matter of the real time
  processing_since timestamptz,
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
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- where the payer returns after a payer step on a source that has no redirect of its own
  redirect_url text CHECK (char_length(redirect_url) <= 2048),
  CHECK ((processing IS NULL) = (processing_since IS NULL))
);
CREATE INDEX charges_list ON charges (account_id, livemode, id);
CREATE INDEX charges_source ON charges (source_id);
CREATE INDEX charges_customer ON charges (customer_id) WHERE customer_id IS NOT NULL;
CREATE INDEX charges_idempotency ON charges (account_id, livemode, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- what the recovery sweep looks for: an operation under way (its process may have died) and a
-- payer's step (the payer may never answer)
CREATE INDEX charges_processing ON charges (processing_since) WHERE processing IS NOT NULL;
CREATE INDEX charges_awaiting_payer ON charges (updated_at) WHERE action IS NOT NULL;
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
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- when its processor call began, by the real time: the recovery sweep finishes a refund whose
  -- process died once this is older than its grace, whatever a test clock says
  pending_since timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_charge ON refunds (charge_id, id);
CREATE INDEX refunds_idempotency ON refunds (charge_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX refunds_pending ON refunds (pending_since) WHERE status = 'pending';

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
-- a charge's events, newest first, for its history (`?charge=` on the event and delivery lists)
CREATE INDEX events_charge ON events (charge_id, id);

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
  -- the Idempotency-Key of the last redelivery asked for: a retry of it whose answer was lost
  -- queues no second one
  redeliver_key text,
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

-- The account's time: what "now" means for an account's objects. Live mode runs on the real time;
-- test mode on the account's test clock. Every statement that reads or stamps the time of an
-- account's objects uses account_now. It is PL/pgSQL, which plans its lookup once per connection
-- and keeps the plan: a SQL function with a subquery is not inlined, and PostgreSQL before 18
-- plans its body again in every statement that calls it, every stamping trigger's included.
CREATE FUNCTION account_now(account text, live boolean) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
  t timestamptz;
BEGIN
  IF live THEN RETURN now(); END IF;
  SELECT coalesce(a.test_clock_start, now()) + a.test_clock_offset_seconds * interval '1 second' INTO t
  FROM accounts a WHERE a.id = account;
  RETURN t;
END $$;

-- Counts advances of any account's clock: a process polls it to sweep at once after an advance
-- another process took.
CREATE SEQUENCE test_clock_advances;

-- When an id says its object was made: the first 12 of its 32 hex digits, in milliseconds. An
-- object is stamped made then, not when its statement began: an id is made before its statement,
-- and another request's may begin first, so that ids would not sort by creation time.
CREATE FUNCTION id_time(id text) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT to_timestamp(('x' || substr(id, length(id) - 31, 12))::bit(48)::bigint / 1000.0)
$$;

-- A test-mode object's time of making: its id's time, moved on by how far its account's clock runs
-- ahead; on a clock that stands (a deterministic account's), the clock's time, which its ids carry.
CREATE FUNCTION account_time_of_id(account text, object_id text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
  t timestamptz;
BEGIN
  SELECT coalesce(a.test_clock_start, id_time(object_id)) + a.test_clock_offset_seconds * interval '1 second' INTO t
  FROM accounts a WHERE a.id = account;
  RETURN t;
END $$;

-- Rows are stamped made at their id's time (id_time), test-mode rows on the account's time. The
-- statements write now() (or leave the column to its default); a time the service worked out
-- itself is already the account's and is kept. An update never moves updated_at back. A row of no
-- account is left to its foreign key.
CREATE FUNCTION stamp_live_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.created_at = now() THEN NEW.created_at := id_time(NEW.id); END IF;
  IF NEW.updated_at = now() THEN NEW.updated_at := id_time(NEW.id); END IF;
  RETURN NEW;
END $$;

-- A live change is stamped with the database's time (a statement writes now()), the making with
-- the service's (its id's): such a stamp never puts a row before its last change, its making
-- included, where the service's clock runs ahead. Called only then (the triggers' WHEN).
CREATE FUNCTION keep_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := OLD.updated_at;
  RETURN NEW;
END $$;

CREATE FUNCTION stamp_test_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
BEGIN
  IF NEW.created_at = now() OR NEW.updated_at = now() THEN
    t := coalesce(account_time_of_id(NEW.account_id, NEW.id), id_time(NEW.id));
    IF NEW.created_at = now() THEN NEW.created_at := t; END IF;
    IF NEW.updated_at = now() THEN NEW.updated_at := t; END IF;
  END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION stamp_test_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.created_at = now() THEN NEW.created_at := coalesce(account_now(NEW.account_id, false), now()); END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION stamp_test_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.updated_at = now() AND NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN
    NEW.updated_at := GREATEST(OLD.updated_at, coalesce(account_now(NEW.account_id, false), now()));
  END IF;
  RETURN NEW;
END $$;

-- a refund is its charge's account's, in its charge's mode
CREATE FUNCTION stamp_refund() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
BEGIN
  IF NEW.updated_at <> now() AND (TG_OP = 'UPDATE' OR NEW.created_at <> now()) THEN RETURN NEW; END IF;
  -- (no such charge: the foreign key refuses the row)
  IF TG_OP = 'INSERT' THEN
    SELECT CASE WHEN c.livemode THEN id_time(NEW.id) ELSE account_time_of_id(c.account_id, NEW.id) END INTO t
    FROM charges c WHERE c.id = NEW.charge_id;
  ELSE
    SELECT account_now(c.account_id, c.livemode) INTO t FROM charges c WHERE c.id = NEW.charge_id;
  END IF;
  t := coalesce(t, now());
  IF TG_OP = 'INSERT' THEN
    IF NEW.created_at = now() THEN NEW.created_at := t; END IF;
    IF NEW.updated_at = now() THEN NEW.updated_at := t; END IF;
  ELSIF NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN
    NEW.updated_at := GREATEST(OLD.updated_at, t);
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER customers_live_insert BEFORE INSERT ON customers
  FOR EACH ROW WHEN (NEW.livemode) EXECUTE FUNCTION stamp_live_insert();
CREATE TRIGGER sources_live_insert BEFORE INSERT ON sources
  FOR EACH ROW WHEN (NEW.livemode) EXECUTE FUNCTION stamp_live_insert();
CREATE TRIGGER charges_live_insert BEFORE INSERT ON charges
  FOR EACH ROW WHEN (NEW.livemode) EXECUTE FUNCTION stamp_live_insert();
CREATE TRIGGER deliveries_live_insert BEFORE INSERT ON deliveries
  FOR EACH ROW WHEN (NEW.livemode) EXECUTE FUNCTION stamp_live_insert();
CREATE TRIGGER customers_live_update BEFORE UPDATE ON customers
  FOR EACH ROW WHEN (NEW.livemode AND NEW.updated_at = now() AND NEW.updated_at < OLD.updated_at)
  EXECUTE FUNCTION keep_updated_at();
CREATE TRIGGER sources_live_update BEFORE UPDATE ON sources
  FOR EACH ROW WHEN (NEW.livemode AND NEW.updated_at = now() AND NEW.updated_at < OLD.updated_at)
  EXECUTE FUNCTION keep_updated_at();
CREATE TRIGGER charges_live_update BEFORE UPDATE ON charges
  FOR EACH ROW WHEN (NEW.livemode AND NEW.updated_at = now() AND NEW.updated_at < OLD.updated_at)
  EXECUTE FUNCTION keep_updated_at();
CREATE TRIGGER deliveries_live_update BEFORE UPDATE ON deliveries
  FOR EACH ROW WHEN (NEW.livemode AND NEW.updated_at = now() AND NEW.updated_at < OLD.updated_at)
  EXECUTE FUNCTION keep_updated_at();
CREATE TRIGGER customers_test_insert BEFORE INSERT ON customers
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_insert();
CREATE TRIGGER customers_test_update BEFORE UPDATE ON customers
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_update();
CREATE TRIGGER sources_test_insert BEFORE INSERT ON sources
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_insert();
CREATE TRIGGER sources_test_update BEFORE UPDATE ON sources
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_update();
CREATE TRIGGER charges_test_insert BEFORE INSERT ON charges
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_insert();
CREATE TRIGGER charges_test_update BEFORE UPDATE ON charges
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_update();
CREATE TRIGGER deliveries_test_insert BEFORE INSERT ON deliveries
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_insert();
CREATE TRIGGER deliveries_test_update BEFORE UPDATE ON deliveries
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_update();
CREATE TRIGGER events_test_insert BEFORE INSERT ON events
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_created();
CREATE TRIGGER idempotency_keys_test_insert BEFORE INSERT ON idempotency_keys
  FOR EACH ROW WHEN (NOT NEW.livemode) EXECUTE FUNCTION stamp_test_created();
CREATE TRIGGER refunds_stamp BEFORE INSERT OR UPDATE ON refunds
  FOR EACH ROW EXECUTE FUNCTION stamp_refund();

-- The test-mode sources that still hold card data to erase, by account and age: the sweep erases
-- those of accounts whose test clock runs ahead of the real time by their account's time.
CREATE INDEX sources_test_card_data ON sources (account_id, created_at)
  WHERE NOT livemode AND (card_cvc_enc IS NOT NULL OR (card_number_enc IS NOT NULL AND NOT used AND customer_id IS NULL));

-- Each account's test-mode fault rules (PUT /v2/test/faults), read by every process of a
-- deployment: operations that fail at a rate, and notify calls that arrive late, twice or out of
-- order. Live mode has none.
CREATE TABLE test_faults (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  rules jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(rules) = 'array'),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The notify rules act where a test-mode notify call is queued, whichever statement queues it, so
-- that the worker sends the calls as it sends any other: `delay` makes a call due later,
-- `duplicate` queues a second call of the same event (below), and `reorder` gives the calls queued while
-- one is held due times in the reverse of their order, so the last queued is sent first.
CREATE FUNCTION test_fault_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  rule jsonb;
  hold interval;
  anchor timestamptz;
  -- how far the account's clock runs ahead: created_at is stamped on it, due times on the real time
  ahead interval;
BEGIN
  -- the second call of a duplicate is queued by this function: it is left as it is
  IF NEW.livemode OR pg_trigger_depth() > 1 THEN
    RETURN NEW;
  END IF;
  FOR rule IN
    SELECT r FROM test_faults f, jsonb_array_elements(f.rules) r
    WHERE f.account_id = NEW.account_id AND r ? 'notify'
  LOOP
    IF random() >= coalesce((rule ->> 'rate')::double precision, 1) THEN
      CONTINUE;
    END IF;
    IF rule ->> 'notify' = 'delay' THEN
      NEW.next_attempt_at := NEW.next_attempt_at + make_interval(secs => (rule ->> 'seconds')::double precision);
    ELSIF rule ->> 'notify' = 'reorder' THEN
      hold := make_interval(secs => coalesce((rule ->> 'seconds')::double precision, 2));
      ahead := coalesce(account_now(NEW.account_id, false), now()) - now();
      -- the first call of the account's still held ones queued within the hold opens the window
      SELECT min(created_at) - ahead INTO anchor FROM deliveries
      WHERE account_id = NEW.account_id AND NOT livemode AND status = 'pending' AND attempt_count = 0
        AND created_at > now() + ahead - hold AND next_attempt_at > now();
      anchor := coalesce(anchor, now());
      -- due after the window, later the earlier it was queued
      NEW.next_attempt_at := anchor + 2 * hold - (now() - anchor);
    END IF;
  END LOOP;
  RETURN NEW;
END
$$;

CREATE TRIGGER deliveries_test_faults BEFORE INSERT ON deliveries
  FOR EACH ROW EXECUTE FUNCTION test_fault_notify();

-- After the statement that queued the call, whose event is then in place, with the due time the
-- other rules gave it.
CREATE FUNCTION test_fault_notify_duplicate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.livemode OR pg_trigger_depth() > 1 THEN
    RETURN NULL;
  END IF;
  IF EXISTS (
    SELECT 1 FROM test_faults f, jsonb_array_elements(f.rules) r
    WHERE f.account_id = NEW.account_id AND r ->> 'notify' = 'duplicate'
      AND random() < coalesce((r ->> 'rate')::double precision, 1)
  ) THEN
    INSERT INTO deliveries (id, account_id, livemode, event_id, event_type, url, payload, status, next_attempt_at)
    VALUES ('dlv_' || substr(NEW.id, 5, 12) || substr(md5(random()::text), 1, 20), NEW.account_id,
      NEW.livemode, NEW.event_id, NEW.event_type, NEW.url, NEW.payload, NEW.status, NEW.next_attempt_at);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER deliveries_test_faults_duplicate AFTER INSERT ON deliveries
  FOR EACH ROW EXECUTE FUNCTION test_fault_notify_duplicate();

-- What the store's encryption key is checked against at every start: an HMAC, by the key, of a
-- fixed text (never the key), written by the first process to open the store. A process started
-- with another key is refused, rather than serving what it cannot decrypt and writing what the
-- others cannot read.
CREATE TABLE encryption_key_check (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  digest text NOT NULL
);
