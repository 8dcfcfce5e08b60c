-- A page of 20 charges as one JSON value, as src/store/charges.ts asks for it (seventh round).
SELECT coalesce(json_agg(x ORDER BY x.id DESC), '[]') AS page FROM (
  SELECT c.id, c.source_id, c.amount, c.amount_refunded, c.authorized, c.captured, c.currency, c.statement_descriptor, c.description, c.require_auth, c.action, c.status, c.livemode, c.metadata, c.failure_data, c.created_at, c.updated_at,
    (SELECT to_json(s) FROM (SELECT s.id, s.type, s.card, s.bank_account, s.redirect, s.owner, s.vaulted, s.used, s.livemode, s.metadata, s.created_at, s.updated_at FROM sources s WHERE s.id = c.source_id) s) AS source,
    (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM (
       SELECT r.id, r.amount, r.currency, r.reason, r.status, r.created_at, r.updated_at FROM refunds r WHERE r.charge_id = c.id) r) AS refunds
  FROM charges c WHERE account_id = (SELECT account_id FROM charges ORDER BY id DESC LIMIT 1) AND livemode = false ORDER BY c.id DESC LIMIT 21
) x;
