-- The Mobile Stores API's backend clients (OAuth 2.0 client credentials, RFC 6749 §4.4), one account's each,
-- created from the CLI. The client's id is its client_id; its secret is shown once and kept only as a SHA-256.
-- A revoked client keeps its row (its id is never reissued) but authenticates nothing.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'storesync_api') THEN
        BEGIN
            CREATE ROLE storesync_api NOLOGIN;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN NULL;  -- created concurrently elsewhere
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'role storesync_api does not exist and % may not create it', current_user
                    USING HINT = 'As an administrator run: CREATE ROLE storesync_api NOLOGIN; then migrate again.';
        END;
    END IF;
END
$$;

CREATE TABLE api_clients (
    id             uuid        PRIMARY KEY,
    account_id     bigint      NOT NULL REFERENCES accounts (id),
    name           text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    scopes         text[]      NOT NULL CHECK (cardinality(scopes) BETWEEN 1 AND 16),
    secret_sha256  bytea       NOT NULL CHECK (length(secret_sha256) = 32),
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz
);
CREATE INDEX api_clients_by_account ON api_clients (account_id, created_at);

-- The API checks a client's secret and scopes against its account; it never lists or changes clients.
GRANT SELECT ON accounts, schema_migrations TO storesync_api;
GRANT SELECT (id, account_id, scopes, secret_sha256, revoked_at) ON api_clients TO storesync_api;
