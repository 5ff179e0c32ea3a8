-- The Mobile Stores API's backend half: the access tokens POST /oauth/token issues, the per-account REST budget
-- every process serving the API shares, where Apple's sandbox answers for a Production connection, and the
-- grants of the API's role.

-- An access token is shown once and kept only as its SHA-256; it belongs to one client of one account and
-- carries the scopes granted at issue. A revoked client's tokens stop at once: every check joins the client.
CREATE TABLE api_access_tokens (
    token_sha256  bytea       PRIMARY KEY CHECK (length(token_sha256) = 32),
    client_id     uuid        NOT NULL REFERENCES api_clients (id),
    account_id    bigint      NOT NULL REFERENCES accounts (id),
    scopes        text[]      NOT NULL CHECK (cardinality(scopes) BETWEEN 1 AND 16),
    issued_at     timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX api_access_tokens_by_expiry ON api_access_tokens (expires_at);

-- Requests per minute an account's backend may make (the REST budget, sf_rest_ratelimit).
ALTER TABLE accounts ADD COLUMN api_rate_limit integer NOT NULL DEFAULT 500 CHECK (api_rate_limit BETWEEN 1 AND 1000000);

-- One fixed window per account and budget, counted by every process that serves the API. Unlogged: a count
-- lost in a crash only forgives part of a minute, and not writing it to the WAL keeps a hit one short upsert.
CREATE UNLOGGED TABLE api_rate_windows (
    account_id         bigint      NOT NULL REFERENCES accounts (id),
    bucket             text        NOT NULL CHECK (length(bucket) BETWEEN 1 AND 200),
    window_started_at  timestamptz NOT NULL,
    hits               integer     NOT NULL,
    PRIMARY KEY (account_id, bucket)
);

-- A Production Apple connection's backend may register a purchase Production does not know; it is then looked up
-- in Apple's Sandbox with the same key (and refused as an environment mismatch). NULL means Apple's sandbox host.
ALTER TABLE store_connections ADD COLUMN sandbox_api_base_url text
    CHECK (sandbox_api_base_url ~ '^https?://\S+$' AND length(sandbox_api_base_url) <= 2000);

-- The API authenticates clients and tokens, issues and revokes account tokens, registers purchases through the
-- same mirror writes as the worker (never deleting from the mirror), reads entitlements and keeps consumption
-- usage. It never reads an account token's secret hash, a customer's e-mail or name, or the queue.
-- DELETE only for tokens long expired, which each new issue of the client clears away.
GRANT SELECT, INSERT, DELETE ON api_access_tokens TO storesync_api;
GRANT SELECT, INSERT, UPDATE ON api_rate_windows TO storesync_api;
GRANT SELECT (id, account_id) ON customers TO storesync_api;
GRANT SELECT (token, account_id, customer_id, status, created_at, revoked_at) ON account_tokens TO storesync_api;
GRANT INSERT (token, account_id, customer_id, secret_sha256) ON account_tokens TO storesync_api;
GRANT UPDATE (status, revoked_at) ON account_tokens TO storesync_api;
GRANT SELECT ON store_connections, plans, plan_prices, entitlements, plan_entitlements, product_mappings TO storesync_api;
GRANT SELECT, INSERT, UPDATE ON store_purchases, customer_subscriptions, invoices, payments, refunds, purchase_events,
                                purchase_tokens, consumption_usage TO storesync_api;
-- A registered Google purchase is acknowledged by the worker's job, and an Apple history longer than one read is
-- finished by a resync: both queued with the mirror's writes, as the worker queues them.
GRANT SELECT (unique_key), INSERT (kind, payload, priority, run_at, unique_key) ON jobs TO storesync_api;
GRANT EXECUTE ON FUNCTION storesync_enqueue(text, jsonb, bytea, jsonb, smallint, timestamptz, integer, text)
    TO storesync_api;
