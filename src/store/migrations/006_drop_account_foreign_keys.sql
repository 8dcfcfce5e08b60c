-- Foreign keys every write paid for without need (measured with perf on the benchmark's write
-- paths).
--
-- A foreign key to accounts checks each inserted row with a query that locks the account's row
-- FOR KEY SHARE: every source, charge, event and notify call of an account took, WAL-logged and,
-- with concurrent writers, merged into a multixact a lock on that one row, about a sixth of
-- PostgreSQL's work in creating a source. The account of every row is the authenticated caller's,
-- and accounts are never deleted, so the check could never fail. The keys between payment objects
-- (a charge's source, a refund's charge, a notify call's event) stay.
ALTER TABLE sources DROP CONSTRAINT IF EXISTS sources_account_id_fkey;
ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_account_id_fkey;
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_account_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_account_id_fkey;
ALTER TABLE customers DROP CONSTRAINT IF EXISTS customers_account_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS idempotency_keys_account_id_fkey;
