-- A charge whose authorization the processor never answered owes a reversal there. This is when it
-- was last asked for, NULL when none is owed. The recovery sweep claims by it, so that asking
-- again changes nothing the API shows (a charge's updated_at stays as the failure left it).
ALTER TABLE charges ADD COLUMN reversal_asked_at timestamptz;
CREATE INDEX charges_reversals_owed ON charges (reversal_asked_at) WHERE reversal_asked_at IS NOT NULL;
