-- Every snapshot a worker applies updates its purchase's row. `store_purchases_live_idx` (connection_id,
-- expires_at) made each of those updates non-HOT — expires_at moves on every renewal — so every update
-- added an entry to all four indexes, and it misled the planner: with the statistics of a young table, the
-- per-job lookup by (connection_id, lineage) read every row of the connection through it (164 buffers a
-- call in `bench pipeline`) instead of one through the unique index. The daily fan-out it was meant for
-- filters on state and expiry with ORs the index cannot use, and scans by connection through the unique
-- index as well. Without it, and with room left on each page, an update that does not link a customer is a
-- HOT update that touches no index (the fill factor applies to pages written from now on).
DROP INDEX store_purchases_live_idx;
ALTER TABLE store_purchases SET (fillfactor = 70);
