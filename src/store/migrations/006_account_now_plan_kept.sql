-- account_now in PL/pgSQL, which plans its lookup once per connection and keeps the plan. As a SQL
-- function whose body holds a subquery it cannot be inlined, and PostgreSQL before 18 planned that
-- body again in every statement that called it: every test-mode insert and update pays for it in
-- its stamping trigger, so a test-mode charge planned it four times.
CREATE OR REPLACE FUNCTION account_now(account text, live boolean) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
  t timestamptz;
BEGIN
  IF live THEN RETURN now(); END IF;
  SELECT coalesce(a.test_clock_start, now()) + a.test_clock_offset_seconds * interval '1 second' INTO t
  FROM accounts a WHERE a.id = account;
  RETURN t;
END $$;

-- A new row's two stamps are one time, read once.
CREATE OR REPLACE FUNCTION stamp_test_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
BEGIN
  IF NEW.created_at = now() OR NEW.updated_at = now() THEN
    t := coalesce(account_now(NEW.account_id, false), now());
    IF NEW.created_at = now() THEN NEW.created_at := t; END IF;
    IF NEW.updated_at = now() THEN NEW.updated_at := t; END IF;
  END IF;
  RETURN NEW;
END $$;
