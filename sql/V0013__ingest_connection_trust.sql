-- Ingest verifies every notification at receipt (Apple: the JWS and its chain against the connection's roots;
-- Google: the Pub/Sub push token against the connection's audience and push account), so that a forgery is
-- refused before anything is stored. It reads what a connection trusts, never what it signs with: no API key,
-- issuer, service-account email or private key.
GRANT SELECT (id, account_id, store, app_identifier, app_apple_id, environment, trusted_roots_pem, push_audience,
              push_service_account, push_jwks_url) ON store_connections TO storesync_ingest;
