import Foundation
import Postgres
import StoreModel

/// Finds purchases by whatever on-call was handed: a lineage (Apple original transaction id, Google first purchase
/// token), a transaction or order id, a purchase token, a customer id, or an account token (never its secret).
/// Every way but one is an index lookup — a linked purchase through its customer's subscriptions — so a search stays
/// quick however many purchases the mirror holds, and the worker's renewals maintain no index of the console's. The one
/// is a pending claim found by its account token: it reads the unlinked purchases (their own index), which are few
/// where tokens are issued before purchases.
public enum PurchaseSearch {
    public struct Match: Sendable, Equatable {
        public let purchaseID: Int64
        public let store: Store
        public let environment: String
        public let lineage: String
        public let productID: String
        public let state: String
        public let customerID: String?
        /// What the text was found as: `lineage`, `transaction`, `purchase token`, `customer`, `account token`.
        public let matchedBy: String
    }

    /// Most matches answered (a customer with more purchases is a rarity worth its own query).
    public static let maxMatches = 50

    /// Purchases `text` names, newest first; empty for text no purchase has.
    public static func find(_ text: String, on db: isolated PostgresConnection) throws -> [Match] {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...4096).contains(text.utf8.count) else { return [] }
        // Customer ids and account tokens are UUIDs: anything else is not sent to a uuid cast.
        let uuid = UUID(uuidString: text)?.uuidString.lowercased()
        return try db.query("""
            WITH c AS (SELECT id FROM store_connections),
            m AS (
                SELECT p.id, 'lineage' AS matched FROM store_purchases p
                WHERE p.connection_id IN (SELECT id FROM c) AND p.lineage = $1
                UNION ALL
                SELECT i.purchase_id, 'transaction' FROM invoices i
                WHERE i.store IN ('apple', 'google') AND i.store_transaction_id = $1
                UNION ALL
                SELECT t.purchase_id, 'purchase token' FROM purchase_tokens t
                WHERE t.connection_id IN (SELECT id FROM c) AND t.purchase_token = $1
                UNION ALL
                SELECT s.purchase_id, 'customer' FROM customer_subscriptions s
                WHERE s.customer_id = $2::uuid AND s.purchase_id IS NOT NULL
                UNION ALL
                SELECT s.purchase_id, 'account token' FROM account_tokens a
                JOIN customer_subscriptions s ON s.customer_id = a.customer_id AND s.purchase_id IS NOT NULL
                WHERE a.token = $2::uuid
                UNION ALL
                -- A pending claim: tagged with the token, no customer yet (the unlinked purchases' index).
                SELECT p.id, 'account token' FROM store_purchases p
                WHERE p.customer_id IS NULL AND p.connection_id IN (SELECT id FROM c) AND p.account_token IN ($1, $2::text)
            )
            SELECT DISTINCT ON (p.id) p.id, c.store, p.environment, p.lineage, p.store_product_id, p.store_state,
                   p.customer_id::text, m.matched
            FROM m JOIN store_purchases p ON p.id = m.id JOIN store_connections c ON c.id = p.connection_id
            ORDER BY p.id DESC LIMIT $3
            """, [text, uuid, maxMatches]).map { row in
            Match(purchaseID: try row.decode(0), store: try PurchaseStory.store(row.decode(1)), environment: try row.decode(2),
                  lineage: try row.decode(3), productID: try row.decode(4), state: try row.decode(5),
                  customerID: try row.decodeOptional(6), matchedBy: try row.decode(7))
        }
    }

    /// How something outside the mirror names a purchase of one of a few connections (an account's, for a
    /// notification whose environment or app may be any of them).
    public enum Reference: Sendable, Equatable {
        case id(Int64)
        case lineage(connectionIDs: [Int64], String)
        /// A Google purchase token, current or replaced.
        case token(connectionIDs: [Int64], String)
        /// A charge's store transaction (Apple transaction id, Google order id).
        case transaction(connectionIDs: [Int64], String)
    }

    /// The purchase `reference` names, if the mirror holds it.
    public static func purchaseID(_ reference: Reference, on db: isolated PostgresConnection) throws -> Int64? {
        let (sql, parameters): (String, [any PostgresEncodable]) = switch reference {
        case .id(let id): ("SELECT id FROM store_purchases WHERE id = $1", [id])
        case .lineage(let connections, let lineage):
            ("SELECT id FROM store_purchases WHERE connection_id = ANY($1::bigint[]) AND lineage = $2",
             [PostgresArray(connections), lineage])
        case .token(let connections, let token):
            ("SELECT purchase_id FROM purchase_tokens WHERE connection_id = ANY($1::bigint[]) AND purchase_token = $2",
             [PostgresArray(connections), token])
        case .transaction(let connections, let transaction):
            ("""
             SELECT i.purchase_id FROM invoices i JOIN store_purchases p ON p.id = i.purchase_id
             WHERE i.store IN ('apple', 'google') AND i.store_transaction_id = $2 AND p.connection_id = ANY($1::bigint[])
             """, [PostgresArray(connections), transaction])
        }
        return try db.query(sql + " LIMIT 1", parameters).first?.decode(0)
    }
}
