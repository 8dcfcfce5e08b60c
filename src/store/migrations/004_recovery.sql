-- What lets a request retried after a crash find the work its first attempt did, and lets the
-- recovery sweep find operations a crash interrupted. The keys are not unique: a key may be used
-- again once its 24 hours are over, and requests with one key never run at once.

ALTER TABLE charges ADD COLUMN idempotency_key text;
-- the Idempotency-Key of the capture, void or refund that last began on the charge
ALTER TABLE charges ADD COLUMN operation_key text;
CREATE INDEX charges_idempotency ON charges (account_id, livemode, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX charges_interrupted ON charges (updated_at) WHERE processing IS NOT NULL;

ALTER TABLE sources ADD COLUMN idempotency_key text;
CREATE INDEX sources_idempotency ON sources (account_id, livemode, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

ALTER TABLE refunds ADD COLUMN idempotency_key text;
CREATE INDEX refunds_idempotency ON refunds (charge_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX refunds_pending ON refunds (updated_at) WHERE status = 'pending';
