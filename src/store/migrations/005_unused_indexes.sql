-- No query reads these two indexes, and every charge written paid for them: an entry in
-- charges_source on insert and again on each update that cannot stay on its heap page, one in
-- events_charge per event. Charges are listed by account and found by id; events likewise.
DROP INDEX IF EXISTS charges_source;
DROP INDEX IF EXISTS events_charge;
