-- A store connection's row splits in two for the code: the connection (store, app, environment, token policy),
-- which travels everywhere, and its credentials (API keys, service account, trusted roots, push settings), which
-- only the worker's store clients load. A client built from one revision of the row loads the credentials again
-- when the revision it sees with the connection moves on; the database bumps it whenever an update changes the
-- row, so no writer can forget to.
ALTER TABLE store_connections ADD COLUMN settings_revision bigint NOT NULL DEFAULT 1;

CREATE FUNCTION storesync_bump_settings_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.settings_revision := OLD.settings_revision + 1;
    RETURN NEW;
END
$$;

CREATE TRIGGER store_connections_settings_revision BEFORE UPDATE ON store_connections
    FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION storesync_bump_settings_revision();
