-- Google wants every purchase token acknowledged, not every lineage: an upgrade, downgrade or re-signup issues
-- a new token that Google refunds after three days unless it is acknowledged too. What was acknowledged is
-- therefore recorded per token. It is not backfilled from store_purchases.acknowledged_at, which does not say
-- which token was acknowledged: a token Google still reports pending is acknowledged (again, harmlessly, if
-- it already was), one it reports acknowledged never is.
ALTER TABLE purchase_tokens ADD COLUMN acknowledged_at timestamptz;

COMMENT ON COLUMN store_purchases.acknowledged_at IS
    'When StoreSync last acknowledged one of the lineage''s tokens with Google; purchase_tokens.acknowledged_at says which.';
