-- The recovery sweep looks for two kinds of unsettled charge: those with an operation under way
-- (their process may have died) and those waiting for their payer (who may never answer). One
-- partial index serves both; a charge that is neither (most, once decided) has no entry, and a
-- card charge without 3-D Secure pays for one index, as it did before the payer timeout.
CREATE INDEX charges_unsettled ON charges (updated_at) WHERE processing IS NOT NULL OR action IS NOT NULL;
DROP INDEX charges_interrupted;
