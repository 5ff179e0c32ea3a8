-- A Google notification reads its lineage's latest invoices (`PurchaseTokens.known`: ORDER BY id DESC LIMIT n for
-- one purchase). With only (purchase_id) indexed, the generic plan of that prepared statement walked the primary
-- key backwards, filtering on the purchase: some 600 pages per notification once the table held a few thousand
-- invoices, about a third of PostgreSQL's CPU per Google notification in `bench pipeline` (issue 22). Ordered by
-- id within the purchase, the index answers it from a few pages, and it still serves every lookup by purchase, so
-- the table keeps the same number of indexes to maintain on every booking.
CREATE INDEX invoices_purchase_id_idx ON invoices (purchase_id, id);
DROP INDEX invoices_purchase_idx;
ALTER INDEX invoices_purchase_id_idx RENAME TO invoices_purchase_idx;
