-- How far the erasure of old security codes has gone through the sources, in id order (ids sort
-- by creation time), so that a restarted process goes on from there rather than from the start.
CREATE TABLE sweep_positions (
  name text PRIMARY KEY,
  position text NOT NULL
);
