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
CREATE INDEX deliveries_list ON deliveries (account_id, livemode, id DESC);
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
