-- The same page as rows: the source's columns beside the charge's, the refunds as JSON.
SELECT c.id, c.source_id, c.amount, c.amount_refunded, c.authorized, c.captured, c.currency, c.statement_descriptor, c.description, c.require_auth, c.action, c.status, c.livemode, c.metadata, c.failure_data, c.created_at, c.updated_at, s.id AS s_id, s.type AS s_type, s.card AS s_card, s.bank_account AS s_bank_account, s.redirect AS s_redirect, s.owner AS s_owner, s.vaulted AS s_vaulted, s.used AS s_used, s.livemode AS s_livemode, s.metadata AS s_metadata, s.created_at AS s_created_at, s.updated_at AS s_updated_at,
  (SELECT json_agg(r ORDER BY r.id) FROM (
     SELECT r.id, r.amount, r.currency, r.reason, r.status, r.created_at, r.updated_at FROM refunds r WHERE r.charge_id = c.id) r) AS refunds
FROM charges c JOIN sources s ON s.id = c.source_id
WHERE c.account_id = (SELECT account_id FROM charges ORDER BY id DESC LIMIT 1) AND c.livemode = false ORDER BY c.id DESC LIMIT 21;
