import Postgres

/// Questions about the store purchases the mirror holds, for callers outside it.
public enum Purchases {
    /// Whether the connection mirrors a purchase of this lineage.
    public static func exists(connectionID: Int64, lineage: String, on db: isolated PostgresConnection) throws -> Bool {
        try !db.query("SELECT 1 FROM store_purchases WHERE connection_id = $1 AND lineage = $2", [connectionID, lineage])
            .isEmpty
    }
}
