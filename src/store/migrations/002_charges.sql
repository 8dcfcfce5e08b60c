-- Charges, their refunds, and the events their state changes record.

CREATE TABLE charges (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  source_id text NOT NULL REFERENCES sources (id),
  customer_id text,
  -- the amount shown: the authorized amount, or after a partial capture the captured amount
  amount bigint NOT NULL CHECK (amount > 0),
  amount_authorized bigint NOT NULL CHECK (amount_authorized > 0),
  amount_refunded bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
  currency text NOT NULL,
  description text NOT NULL,
  statement_descriptor text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'voided', 'refunded')),
  authorized boolean NOT NULL DEFAULT false,
  captured boolean NOT NULL DEFAULT false,
  capture boolean NOT NULL,
  require_auth boolean NOT NULL,
  -- what the service is doing with the processor right now: an operation recorded before the
  -- call and cleared with its outcome, so two operations never overlap
  processing text,
  action jsonb,
  action_token text,
  otp_attempts integer NOT NULL DEFAULT 0,
  processor_ref text,
  failure_data jsonb,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX charges_list ON charges (account_id, livemode, id DESC);
CREATE INDEX charges_source ON charges (source_id);

CREATE TABLE refunds (
  id text PRIMARY KEY,
  charge_id text NOT NULL REFERENCES charges (id) ON DELETE CASCADE,
  amount bigint NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  reason text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_charge ON refunds (charge_id, id);

CREATE TABLE events (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  type text NOT NULL,
  charge_id text,
  -- the object as it was when the event happened
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_list ON events (account_id, livemode, id DESC);
CREATE INDEX events_charge ON events (charge_id);
