-- A dedup receipt is keyed the way its store guarantees uniqueness. Pub/Sub guarantees a messageId unique only
-- within its topic, and StoreSync receives the topics of many accounts and apps: keyed on (store, message_id),
-- a second tenant's push that happened to share a first tenant's messageId was completed as a duplicate — a
-- lost notification. Google receipts are now scoped by the account and the push's subscription (one topic
-- each); Apple's notificationUUID is a UUID, unique everywhere, so Apple's scope stays ''. Existing receipts
-- take scope '', right for Apple's; Google's cannot be given their scope (nothing kept says which account and
-- subscription), so a push delivered again within their last 7 days is processed again: a harmless second
-- re-fetch, as the mirror books each store charge and refund once.
--
-- Locking: the migrator runs each file in one transaction, so the index cannot be built CONCURRENTLY, and the
-- new key is built under the ACCESS EXCLUSIVE lock the new column takes, until COMMIT. The table holds at
-- most 7 days of receipts (the hourly purge deletes older ones), and only workers use it — ingest never
-- reads it, so webhooks keep being accepted: for the build's duration a worker's receipt read or write
-- waits, then carries on. The build sorts about a million receipts in 3 to 6 seconds (PostgreSQL 15, two
-- busy cores); adding the column with a constant default rewrites nothing. A worker still running the
-- previous build after this commits fails its receipt insert, whose ON CONFLICT names the old key, and
-- retries the job; restart the workers after migrating, as the upgrade steps say.
--
-- The storesync_worker grant on the table covers the new column.
ALTER TABLE notification_receipts
    ADD COLUMN scope text NOT NULL DEFAULT '' CHECK (length(scope) <= 500);

ALTER TABLE notification_receipts
    DROP CONSTRAINT notification_receipts_pkey,
    ADD PRIMARY KEY (store, scope, message_id);

COMMENT ON COLUMN notification_receipts.scope IS
    'What makes message_id unique: '''' for Apple (a UUID); the account id, a space and the Pub/Sub subscription for Google.';
