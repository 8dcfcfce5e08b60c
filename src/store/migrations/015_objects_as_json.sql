-- The objects a source, a charge and a customer carry (a card as shown, an address, an action,
-- a failure, metadata) are written whole by the service and read back whole: nothing queries
-- into them, as with events' data (011). As jsonb, PostgreSQL parsed each one into its binary
-- form, sorting its keys, on every write, and printed it again on every read: a quarter of its
-- instructions for a source in a batch. As json it is checked and kept as sent.
ALTER TABLE sources
  ALTER COLUMN card TYPE json USING card::json,
  ALTER COLUMN bank_account TYPE json USING bank_account::json,
  ALTER COLUMN redirect TYPE json USING redirect::json,
  ALTER COLUMN owner TYPE json USING owner::json,
  ALTER COLUMN metadata TYPE json USING metadata::json;

ALTER TABLE charges
  ALTER COLUMN action TYPE json USING action::json,
  ALTER COLUMN failure_data TYPE json USING failure_data::json,
  ALTER COLUMN metadata DROP DEFAULT,
  ALTER COLUMN metadata TYPE json USING metadata::json,
  ALTER COLUMN metadata SET DEFAULT '{}'::json;

ALTER TABLE customers
  ALTER COLUMN metadata DROP DEFAULT,
  ALTER COLUMN metadata TYPE json USING metadata::json,
  ALTER COLUMN metadata SET DEFAULT '{}'::json;
