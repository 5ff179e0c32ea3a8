-- The worker links a purchase to its customer through an issued account token or a raw customer id: it needs to
-- know which token belongs to which customer of which account, and which customer ids exist in an account, and
-- nothing else of those tables. It could read every customer's e-mail address and name, and every token's secret
-- hash, which a login holding only the worker's role (on-call inspecting dead letters, say) had no use for.
REVOKE SELECT ON customers, account_tokens FROM storesync_worker;
GRANT SELECT (id, account_id) ON customers TO storesync_worker;
GRANT SELECT (token, account_id, customer_id, status) ON account_tokens TO storesync_worker;
