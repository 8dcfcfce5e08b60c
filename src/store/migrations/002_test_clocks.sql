-- Each account's test clock: how far its test-mode time runs ahead of the real time. It only moves
-- forward (POST /v2/test/clock/advance).
ALTER TABLE accounts ADD COLUMN test_clock_offset_seconds bigint NOT NULL DEFAULT 0
  CHECK (test_clock_offset_seconds >= 0);
