-- The recovery sweep fails charges whose payer has not answered in time. Only charges waiting
-- for their payer carry an action, so the index holds those alone and a charge that never waits
-- (a card without 3-D Secure) adds nothing to it.
CREATE INDEX charges_awaiting_payer ON charges (updated_at) WHERE action IS NOT NULL;
