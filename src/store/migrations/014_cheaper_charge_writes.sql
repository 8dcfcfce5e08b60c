-- Two costs every charge written paid for without need, counted with callgrind
-- (PGI_CONCURRENCY=20 PGI_OPS=charge bash bench/pg-instructions.sh 400): PostgreSQL's
-- instructions a charge went from 92 000-98 000 to 52 000-53 000 without the foreign key, and to
-- 44 000-46 000 with the indexes below as well.
--
-- The foreign key from a charge to its source checked each inserted charge with a query of its
-- own that locked the source's row FOR KEY SHARE, a WAL record each. Every charge is inserted by
-- the statement or transaction that takes its source (the row updated or locked there, so it
-- exists), and no source is ever deleted, so the check could never fail.
ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_source_id_fkey;

-- Lists walk these indexes newest first, and a new id is the highest. In descending order each
-- insert went to the leftmost leaf, and a leaf split there leaves both halves half full: the
-- indexes were twice their size, and each split WAL-logged half a page. In ascending order an
-- insert goes to the rightmost leaf, which PostgreSQL splits leaving the left one full, and a
-- backward scan reads a page newest first just the same.
DROP INDEX charges_list;
CREATE INDEX charges_list ON charges (account_id, livemode, id);
DROP INDEX events_list;
CREATE INDEX events_list ON events (account_id, livemode, id);
DROP INDEX deliveries_list;
CREATE INDEX deliveries_list ON deliveries (account_id, livemode, id);
DROP INDEX customers_list;
CREATE INDEX customers_list ON customers (account_id, livemode, id);
