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
      -- the first call of the account's still held ones queued within the hold opens the window
      SELECT min(created_at) INTO anchor FROM deliveries
      WHERE account_id = NEW.account_id AND NOT livemode AND status = 'pending' AND attempt_count = 0
        AND created_at > now() - hold AND next_attempt_at > now();
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
