-- An event's object is written once, by the service, and only ever read back whole: nothing
-- queries into it. As jsonb, PostgreSQL parsed it into its binary form on every insert (the
-- larger part of the JSON a charge's statement carries) and printed it again on every read. As
-- json it is checked and kept as sent.
ALTER TABLE events ALTER COLUMN data TYPE json USING data::json;
