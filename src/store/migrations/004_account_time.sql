-- The account's time: what "now" means for an account's objects. Live mode runs on the real time;
-- test mode on the account's test clock. A deterministic account's test clock does not run: it
-- starts at test_clock_start and moves only when advanced. Every statement that reads or stamps
-- the time of an account's objects uses account_now.
ALTER TABLE accounts ADD COLUMN test_clock_start timestamptz;
-- A deterministic account's test-mode ids are made from its seed and a counter of ids made so far,
-- kept here so that every process counts on from the same place.
ALTER TABLE accounts ADD COLUMN id_seed text;
ALTER TABLE accounts ADD COLUMN id_counter bigint NOT NULL DEFAULT 0;
-- the accounts whose test-mode time is not the real time, which sweeps look at besides
CREATE INDEX accounts_clock_apart ON accounts (id) WHERE test_clock_offset_seconds > 0 OR test_clock_start IS NOT NULL;
-- ids are unique across accounts, and one seed makes the same ids in every account
CREATE UNIQUE INDEX accounts_id_seed ON accounts (id_seed) WHERE id_seed IS NOT NULL;

CREATE FUNCTION account_now(account text, live boolean) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN live THEN now() ELSE (
    SELECT coalesce(a.test_clock_start, now()) + a.test_clock_offset_seconds * interval '1 second'
    FROM accounts a WHERE a.id = account) END
$$;

-- Counts advances of any account's clock: a process polls it to sweep at once after an advance
-- another process took.
CREATE SEQUENCE test_clock_advances;

-- Test-mode rows are stamped on the account's time. The statements write now() (or leave the
-- column to its default); a time the service worked out itself is already the account's and is
-- kept. An update never moves updated_at back. A row of no account is left to its foreign key.
CREATE FUNCTION stamp_test_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.created_at = now() THEN NEW.created_at := coalesce(account_now(NEW.account_id, false), now()); END IF;
  IF NEW.updated_at = now() THEN NEW.updated_at := coalesce(account_now(NEW.account_id, false), now()); END IF;
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
  SELECT coalesce(account_now(c.account_id, c.livemode), now()) INTO t FROM charges c WHERE c.id = NEW.charge_id;
  t := coalesce(t, now());
  IF TG_OP = 'INSERT' THEN
    IF NEW.created_at = now() THEN NEW.created_at := t; END IF;
    IF NEW.updated_at = now() THEN NEW.updated_at := t; END IF;
  ELSIF NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN
    NEW.updated_at := GREATEST(OLD.updated_at, t);
  END IF;
  RETURN NEW;
END $$;

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
