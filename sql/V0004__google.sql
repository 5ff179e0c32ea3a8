-- What Google Play connections need besides the common settings, and the purchase-token chains that make
-- up a Google purchase lineage.

-- Google: the service account StoreSync calls the Play Developer API as (its RSA key goes in
-- api_private_key), the OAuth token endpoint, and what authenticates Pub/Sub pushes: the audience the push
-- subscription puts in its OIDC tokens, the service account the push subscription signs as, and the JWKS
-- URL of Google's signing keys (a simulator's in tests).
ALTER TABLE store_connections
    ADD COLUMN api_client_email      text CHECK (length(api_client_email) <= 320),
    ADD COLUMN api_token_uri         text CHECK (api_token_uri ~ '^https?://\S+$' AND length(api_token_uri) <= 2000),
    ADD COLUMN push_audience         text CHECK (length(push_audience) <= 2000),
    ADD COLUMN push_service_account  text CHECK (length(push_service_account) <= 320),
    ADD COLUMN push_jwks_url         text CHECK (push_jwks_url ~ '^https?://\S+$' AND length(push_jwks_url) <= 2000);

-- Every Google purchase token seen, and the lineage (purchase) it belongs to: an upgrade, downgrade or
-- re-signup issues a new token whose linkedPurchaseToken names the old one; all of them are one lineage,
-- which keeps one customer and one customer subscription. A replaced token records what replaced it.
CREATE TABLE purchase_tokens (
    connection_id   bigint NOT NULL REFERENCES store_connections (id),
    purchase_token  text NOT NULL CHECK (length(purchase_token) BETWEEN 1 AND 4096),
    purchase_id     bigint NOT NULL REFERENCES store_purchases (id),
    replaced_by     text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, purchase_token)
);
CREATE INDEX purchase_tokens_purchase_idx ON purchase_tokens (purchase_id);

-- When StoreSync acknowledged the purchase with Google (Google refunds purchases left unacknowledged for
-- three days).
ALTER TABLE store_purchases ADD COLUMN acknowledged_at timestamptz;

GRANT SELECT, INSERT, UPDATE ON purchase_tokens TO storesync_worker;
