import Postgres
import StoreModel

/// Google purchase-token chains. A new token whose `linkedPurchaseToken` names a known one continues that
/// token's lineage; the lineage's id is its first token.
public enum PurchaseTokens {
    /// The lineage a token belongs to, if the token was seen before.
    public static func lineage(of token: String, connectionID: Int64, on db: isolated PostgresConnection) throws -> String? {
        try db.query("""
            SELECT p.lineage FROM purchase_tokens t JOIN store_purchases p ON p.id = t.purchase_id
            WHERE t.connection_id = $1 AND t.purchase_token = $2
            """, [connectionID, token]).first?.decode(0)
    }

    /// What the mirror knows of a purchase token before the store is asked about it, on one of the account's
    /// connections of the app: read with the connections and the receipt, it spares a notification's re-fetch the
    /// round trips that would otherwise ask for the lineage and for the charges booked already.
    public struct Known: Sendable, Equatable {
        public let connectionID: Int64
        public let lineage: String
        /// The store transaction ids of the lineage's latest invoices, newest first: which recent charges need no
        /// store read to be booked.
        public let bookedCharges: Set<String>
    }

    /// `token` (nil matches nothing) on each of the account's connections of `appIdentifier` on `store` that holds it,
    /// with at most `recentCharges` booked charges.
    public static func known(token: String?, accountID: Int64, store: Store, appIdentifier: String,
                             recentCharges: Int) -> PostgresQuery<[Known]> {
        PostgresQuery("""
            SELECT t.connection_id, p.lineage, i.store_transaction_id
            FROM store_connections c
            JOIN purchase_tokens t ON t.connection_id = c.id AND t.purchase_token = $4
            JOIN store_purchases p ON p.id = t.purchase_id
            LEFT JOIN LATERAL (SELECT store_transaction_id FROM invoices WHERE purchase_id = p.id ORDER BY id DESC LIMIT $5) i
                ON true
            WHERE c.account_id = $1 AND c.store = $2 AND c.app_identifier = $3
            """, [accountID, store.rawValue, appIdentifier, token, recentCharges]) { rows in
            var known: [Int64: (lineage: String, charges: Set<String>)] = [:]
            for row in rows {
                let connectionID: Int64 = try row.decode(0)
                let lineage: String = try row.decode(1)
                let charge: String? = try row.decodeOptional(2)
                known[connectionID, default: (lineage, [])].charges.formUnion(charge.map { [$0] } ?? [])
            }
            return known.map { Known(connectionID: $0.key, lineage: $0.value.lineage, bookedCharges: $0.value.charges) }
        }
    }

    /// Every token recorded for `lineage`: the orders any of them was charged by belong to the lineage.
    public static func tokens(ofLineage lineage: String, connectionID: Int64, on db: isolated PostgresConnection) throws
        -> [String]
    {
        try db.query("""
            SELECT t.purchase_token FROM purchase_tokens t JOIN store_purchases p ON p.id = t.purchase_id
            WHERE p.connection_id = $1 AND p.lineage = $2 ORDER BY t.purchase_token
            """, [connectionID, lineage]).map { try $0.decode(0) }
    }

    /// One token of a snapshot's chain and the token that replaced it (nil for the current one).
    struct Link: Equatable {
        let token: String
        let replacedBy: String?
    }

    /// The snapshot's token and the ones it replaced, oldest first, each with its successor: what `record`
    /// writes. Empty without a purchase token (Apple).
    static func chain(of snapshot: StoreSnapshot) -> [Link] {
        guard let current = snapshot.purchaseToken else { return [] }
        let tokens = snapshot.replacedTokens + [current]
        return tokens.indices.map { Link(token: tokens[$0], replacedBy: $0 + 1 < tokens.count ? tokens[$0 + 1] : nil) }
    }

    /// Records `chain` as the purchase's tokens; returns the tokens newly marked replaced, for the timeline.
    static func record(_ chain: [Link], purchaseID: Int64, connectionID: Int64,
                       on db: isolated PostgresConnection) throws -> [String] {
        guard !chain.isEmpty else { return [] }
        if chain.count == 1 {
            // A token that replaced none (every renewal of a purchase) marks nothing replaced: the insert goes out with
            // the next statement, and a token known already is left as it is.
            try db.queryLater("""
                INSERT INTO purchase_tokens (connection_id, purchase_token, purchase_id) VALUES ($1, $2, $3)
                ON CONFLICT (connection_id, purchase_token) DO NOTHING
                """, [connectionID, chain[0].token, purchaseID])
            return []
        }
        return try db.query("""
            WITH c AS (SELECT * FROM unnest($3::text[], $4::text[]) AS c(token, replaced_by)),
            inserted AS (
                INSERT INTO purchase_tokens (connection_id, purchase_token, purchase_id, replaced_by)
                SELECT $1, token, $2, replaced_by FROM c
                ON CONFLICT (connection_id, purchase_token) DO UPDATE SET replaced_by = EXCLUDED.replaced_by
                    WHERE purchase_tokens.replaced_by IS NULL AND EXCLUDED.replaced_by IS NOT NULL
                RETURNING purchase_token, replaced_by
            )
            SELECT purchase_token FROM inserted WHERE replaced_by IS NOT NULL
            """, [connectionID, purchaseID, PostgresArray(chain.map(\.token)), PostgresArray(chain.map(\.replacedBy))])
            .map { try $0.decode(0) }
    }
}

extension PurchaseTokens {
    /// The lineage's current token (nil when none is recorded) and the purchase's store state, if the connection
    /// mirrors the lineage.
    public static func current(connectionID: Int64, lineage: String,
                               on db: isolated PostgresConnection) throws -> (token: String?, state: String)? {
        try db.query("""
            SELECT t.purchase_token, p.store_state FROM store_purchases p
            LEFT JOIN purchase_tokens t ON t.purchase_id = p.id AND t.replaced_by IS NULL
            WHERE p.connection_id = $1 AND p.lineage = $2 LIMIT 1
            """, [connectionID, lineage]).first.map { (token: try $0.decodeOptional(0), state: try $0.decode(1)) }
    }

    /// Marks `token` acknowledged. The purchase stops needing an acknowledgement only once its current token
    /// has one: a late acknowledgement of a replaced token leaves the flag of its successor alone.
    public static func recordAcknowledgement(of token: String, connectionID: Int64, purchaseID: Int64,
                                             on db: isolated PostgresConnection) throws {
        _ = try db.query("""
            WITH token AS (
                UPDATE purchase_tokens SET acknowledged_at = now()
                WHERE connection_id = $1 AND purchase_token = $2 AND purchase_id = $3
                RETURNING purchase_token
            )
            UPDATE store_purchases p SET acknowledged_at = now(),
                needs_acknowledgement = needs_acknowledgement AND EXISTS (
                    SELECT 1 FROM purchase_tokens t WHERE t.purchase_id = p.id AND t.replaced_by IS NULL
                    AND t.acknowledged_at IS NULL AND t.purchase_token NOT IN (SELECT purchase_token FROM token))
            WHERE p.id = $3
            """, [connectionID, token, purchaseID])
    }
}
