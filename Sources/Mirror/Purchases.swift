import Foundation
import Postgres
import StoreModel

/// Questions about the store purchases the mirror holds, and the few writes about a purchase that are not a
/// snapshot's (acknowledgements), for callers outside the mirror.
public enum Purchases {
    /// Whether the connection mirrors a purchase of this lineage.
    public static func exists(connectionID: Int64, lineage: String, on db: isolated PostgresConnection) throws -> Bool {
        try !db.query("SELECT 1 FROM store_purchases WHERE connection_id = $1 AND lineage = $2", [connectionID, lineage])
            .isEmpty
    }

    /// The lineage of a purchase, if it still exists.
    public static func lineage(purchaseID: Int64, on db: isolated PostgresConnection) throws -> String? {
        try db.query("SELECT lineage FROM store_purchases WHERE id = $1", [purchaseID]).first?.decode(0)
    }

    /// The store cursor (`StoreSnapshot.cursor`, Apple's history revision) stored with a lineage's purchase, nil
    /// before its first fetch.
    public static func storedCursor(connectionID: Int64, lineage: String) -> PostgresQuery<String?> {
        PostgresQuery("SELECT history_revision FROM store_purchases WHERE connection_id = $1 AND lineage = $2",
                      [connectionID, lineage]) { try $0.first?.decodeOptional(0, as: String.self) }
    }

    /// Connection id → the stored cursor of `lineage`, for each of the account's connections of one app that
    /// mirror it: read with the connections themselves, before knowing which one a notification is for.
    public static func storedCursors(accountID: Int64, store: Store, appIdentifier: String,
                                     lineage: String) -> PostgresQuery<[Int64: String?]> {
        PostgresQuery("""
            SELECT p.connection_id, p.history_revision FROM store_purchases p
            JOIN store_connections c ON c.id = p.connection_id
            WHERE c.account_id = $1 AND c.store = $2 AND c.app_identifier = $3 AND p.lineage = $4
            """, [accountID, store.rawValue, appIdentifier, lineage]) { rows in
            try Dictionary(rows.map { (try $0.decode(0, as: Int64.self), try $0.decodeOptional(1, as: String.self)) },
                           uniquingKeysWith: { first, _ in first })
        }
    }

    /// A lineage to resync, with the MD5 of its name (hex) that resync unique keys carry.
    public struct ResyncCandidate: Sendable {
        /// Where the next page starts (`resyncCandidates(after:)`).
        public let purchaseID: Int64
        public let lineage: String
        public let digest: String
    }

    /// Up to `limit` of the connection's lineages worth a resync, in purchase order from after purchase `after`:
    /// the live ones and those expired or revoked within `horizon` (a late refund or recovery can still change
    /// them); or just `lineage`, whatever its state.
    public static func resyncCandidates(connectionID: Int64, lineage: String?, horizon: Duration, after: Int64, limit: Int,
                                        on db: isolated PostgresConnection) throws -> [ResyncCandidate] {
        try db.query("""
            SELECT p.id, p.lineage, md5(p.lineage) FROM store_purchases p
            WHERE p.connection_id = $1 AND p.id > $4
              AND ($2::text IS NULL OR p.lineage = $2)
              AND ($2::text IS NOT NULL OR p.store_state NOT IN ('expired', 'revoked') OR p.expires_at IS NULL
                   OR p.expires_at > now() - $3::bigint * interval '1 second')
            ORDER BY p.id LIMIT $5
            """, [connectionID, lineage, Int64(horizon.components.seconds), after, limit]).map {
            ResyncCandidate(purchaseID: try $0.decode(0), lineage: try $0.decode(1), digest: try $0.decode(2))
        }
    }

    /// Clears a purchase's acknowledgement flag that a snapshot fetched before its token's acknowledgement set
    /// again.
    public static func clearNeedsAcknowledgement(purchaseID: Int64, on db: isolated PostgresConnection) throws {
        _ = try db.query("UPDATE store_purchases SET needs_acknowledgement = false WHERE id = $1 AND needs_acknowledgement",
                         [purchaseID])
    }
}
