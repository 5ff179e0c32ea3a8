import Foundation
import Postgres
import StoreModel

/// Everything the mirror holds about one purchase, for the page an on-call engineer opens when a customer says
/// "I paid and I don't have pro": the purchase as the store last described it, its timeline (notifications and
/// resyncs applied, state changes, links, charges, refunds, drift, on-call's actions), its charges with their
/// payments and refunds, and its purchase tokens. Read in one repeatable-read transaction, so the parts agree.
public struct PurchaseStory: Sendable {
    public struct Purchase: Sendable {
        public let id: Int64
        public let accountID: Int64
        public let connectionID: Int64
        public let store: Store
        public let appIdentifier: String
        public let environment: String
        public let lineage: String
        public let customerID: String?
        public let linkedAt: Date?
        /// The account token the store's answer carried (Apple `appAccountToken`, Google's obfuscated account id).
        public let accountToken: String?
        public let productID: String
        public let basePlanID: String?
        public let state: String
        public let expiresAt: Date?
        public let autoRenew: Bool
        public let inFreeTrial: Bool
        public let needsAcknowledgement: Bool
        /// When the store's answer the mirror holds was true.
        public let asOf: Date
        /// That answer, verbatim (JSON).
        public let snapshot: String
        public let createdAt: Date
        public let updatedAt: Date
    }

    /// One timeline event: `source` is what applied it (`notification`, `resync`, `registration`, `console`…) and
    /// `reference` which one (a notification's id, a dead letter).
    public struct Event: Sendable {
        public let at: Date
        public let kind: String
        public let source: String
        public let reference: String?
        public let storeEvent: String?
        /// JSON object.
        public let detail: String
    }

    public struct Charge: Sendable {
        public let transactionID: String
        public let productID: String
        public let amount: Money
        public let issuedAt: Date
        public let periodStart: Date?
        public let periodEnd: Date?
        public let paid: Bool
        public let refund: Refund?
    }

    public struct Refund: Sendable {
        public let amount: Money
        public let kind: String
        public let reason: String?
        public let refundedAt: Date
        public let reversedAt: Date?
    }

    /// A Google purchase token of the lineage, oldest first.
    public struct Token: Sendable {
        public let token: String
        public let replacedBy: String?
        public let acknowledgedAt: Date?
        public let createdAt: Date
    }

    public let purchase: Purchase
    /// Oldest first.
    public let events: [Event]
    /// Newest first.
    public let charges: [Charge]
    public let tokens: [Token]

    /// Most timeline events and charges read: a purchase renewed daily for years stays one page.
    public static let maxRows = 1_000

    /// The story of purchase `id`, or nil when there is none.
    public static func read(id: Int64, on db: isolated PostgresConnection) throws -> PurchaseStory? {
        try db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        let answers = try db.query([
            PostgresStatement("""
                SELECT p.id, c.account_id, p.connection_id, c.store, c.app_identifier, p.environment, p.lineage,
                       p.customer_id::text, p.linked_at, p.account_token, p.store_product_id, p.base_plan_id, p.store_state,
                       p.expires_at, p.auto_renew, p.in_free_trial, p.needs_acknowledgement, p.as_of, p.snapshot::text,
                       p.created_at, p.updated_at
                FROM store_purchases p JOIN store_connections c ON c.id = p.connection_id WHERE p.id = $1
                """, [id]),
            PostgresStatement("""
                SELECT occurred_at, kind, source, reference, store_event, detail::text FROM (
                    SELECT * FROM purchase_events WHERE purchase_id = $1 ORDER BY id DESC LIMIT $2) e
                ORDER BY id
                """, [id, maxRows]),
            PostgresStatement("""
                SELECT i.store_transaction_id, i.store_product_id, i.amount_minor, i.currency, i.issued_at, i.period_start,
                       i.period_end, p.id IS NOT NULL, f.amount_minor, f.currency, f.kind, f.reason, f.refunded_at,
                       f.reversed_at
                FROM invoices i LEFT JOIN payments p ON p.invoice_id = i.id LEFT JOIN refunds f ON f.invoice_id = i.id
                WHERE i.purchase_id = $1 ORDER BY i.issued_at DESC, i.id DESC LIMIT $2
                """, [id, maxRows]),
            PostgresStatement("""
                SELECT purchase_token, replaced_by, acknowledged_at, created_at FROM purchase_tokens
                WHERE purchase_id = $1 ORDER BY created_at, purchase_token LIMIT $2
                """, [id, maxRows]),
        ])
        guard let row = answers[0].first else { return nil }
        let purchase = Purchase(
            id: try row.decode(0), accountID: try row.decode(1), connectionID: try row.decode(2),
            store: try store(row.decode(3)), appIdentifier: try row.decode(4), environment: try row.decode(5),
            lineage: try row.decode(6), customerID: try row.decodeOptional(7), linkedAt: try row.decodeOptional(8),
            accountToken: try row.decodeOptional(9), productID: try row.decode(10), basePlanID: try row.decodeOptional(11),
            state: try row.decode(12), expiresAt: try row.decodeOptional(13), autoRenew: try row.decode(14),
            inFreeTrial: try row.decode(15), needsAcknowledgement: try row.decode(16), asOf: try row.decode(17),
            snapshot: try row.decode(18), createdAt: try row.decode(19), updatedAt: try row.decode(20))
        let events = try answers[1].map { row in
            Event(at: try row.decode(0), kind: try row.decode(1), source: try row.decode(2), reference: try row.decodeOptional(3),
                  storeEvent: try row.decodeOptional(4), detail: try row.decode(5))
        }
        let charges = try answers[2].map { row in
            let refund: Refund? = if let minor: Int64 = try row.decodeOptional(8) {
                Refund(amount: Money(minorUnits: minor, currency: try row.decode(9)), kind: try row.decode(10),
                       reason: try row.decodeOptional(11), refundedAt: try row.decode(12), reversedAt: try row.decodeOptional(13))
            } else {
                nil
            }
            return Charge(transactionID: try row.decode(0), productID: try row.decode(1),
                          amount: Money(minorUnits: try row.decode(2), currency: try row.decode(3)), issuedAt: try row.decode(4),
                          periodStart: try row.decodeOptional(5), periodEnd: try row.decodeOptional(6), paid: try row.decode(7),
                          refund: refund)
        }
        let tokens = try answers[3].map { row in
            Token(token: try row.decode(0), replacedBy: try row.decodeOptional(1), acknowledgedAt: try row.decodeOptional(2),
                  createdAt: try row.decode(3))
        }
        return PurchaseStory(purchase: purchase, events: events, charges: charges, tokens: tokens)
    }

    static func store(_ name: String) throws -> Store {
        guard let store = Store(rawValue: name) else {
            throw PostgresError(.decoding, message: "store_connections.store holds \(name.debugDescription)")
        }
        return store
    }

    /// Records on the purchase's timeline what on-call did to a dead letter that concerned it, with who did it:
    /// the timeline is where the next engineer reads the purchase's story. Sent with the transaction's next
    /// statement, in the action's own transaction.
    public static func recordOperatorAction(_ action: String, by operatorName: String, deadLetterID: Int64, kind: String,
                                            purchaseID: Int64, on db: isolated PostgresConnection) throws {
        var timeline = Timeline()
        timeline.add("dead_letter_\(action)", ["operator": operatorName])
        try timeline.write(purchaseID: purchaseID,
                           source: SnapshotSource(kind: "console", reference: "dead letter \(deadLetterID)", event: kind),
                           on: db)
    }
}
