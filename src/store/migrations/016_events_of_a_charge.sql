-- The events of one charge, and through them its notify calls, are listed (`?charge=` on the
-- event and delivery lists) for a charge's history. Each event pays one index entry for it; its
-- charge ids are recent ones, so entries go to the index's last pages.
CREATE INDEX events_charge ON events (charge_id, id);
