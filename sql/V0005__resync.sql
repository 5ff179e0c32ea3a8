-- Where each reconciliation sweep of each connection stopped, so a crash resumes there and a missed day
-- catches up once: Apple's notification history (failed deliveries) and Google's voided purchases.
CREATE TABLE sweep_watermarks (
    connection_id  bigint NOT NULL REFERENCES store_connections (id),
    sweep          text NOT NULL CHECK (sweep ~ '^[a-z0-9._-]{1,60}$'),
    -- Everything the store reported up to here has been handled.
    watermark      timestamptz NOT NULL,
    -- A page token inside the current window, when a sweep stopped between pages.
    cursor         text CHECK (length(cursor) <= 4096),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, sweep)
);

-- The daily fan-out reads every live lineage of a connection; resync jobs find theirs by lineage.
CREATE INDEX store_purchases_live_idx ON store_purchases (connection_id, expires_at);

GRANT SELECT, INSERT, UPDATE ON sweep_watermarks TO storesync_worker;
