-- The Mobile Stores API's app half: apps authenticate with an account token and its client secret, and are
-- limited per token (authenticated requests) and per address (requests whose pair is wrong), apart from the
-- account's REST budget.

-- Requests per minute one account token may make, and failed authentications per minute one address may make,
-- on the app endpoints. Defaults no real app meets; raised per account by support.
ALTER TABLE accounts
    ADD COLUMN app_token_rate_limit integer NOT NULL DEFAULT 120 CHECK (app_token_rate_limit BETWEEN 1 AND 1000000),
    ADD COLUMN app_address_failure_limit integer NOT NULL DEFAULT 60
        CHECK (app_address_failure_limit BETWEEN 1 AND 1000000);

-- The API compares the secret's hash to authenticate an app; it still never writes one but at issue.
GRANT SELECT (secret_sha256) ON account_tokens TO storesync_api;

-- A window per token and per failing address accumulates; the worker's hourly purge drops those long ended.
GRANT SELECT, DELETE ON api_rate_windows TO storesync_worker;
