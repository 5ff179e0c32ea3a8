import Foundation
import Postgres
import StoreModel

/// What the mirror holds for one customer — its subscriptions from every source and the entitlements they
/// grant now — so on-call can answer "why does this customer (not) have pro?" without SQL.
public struct CustomerSummary: Sendable {
    public struct Subscription: Sendable {
        public let id: Int64
        public let source: String
        public let planCode: String
        public let priceCode: String
        public let price: Money
        public let status: String
        public let storeState: String?
        public let currentPeriodEnd: Date?
        public let expiresAt: Date?
        public let graceEndsAt: Date?
        public let autoRenew: Bool
        public let cancelledAt: Date?
        /// The store purchase it mirrors: connection and lineage; `nil` for a web subscription.
        public let connectionID: Int64?
        public let lineage: String?
    }

    public let customerID: String
    public let accountID: Int64
    public let email: String?
    public let name: String
    public let subscriptions: [Subscription]
    public let entitlements: [Entitlement]

    /// The customer's summary, or `nil` when there is no such customer. It reads in several statements: run it in
    /// a REPEATABLE READ transaction for subscriptions and entitlements of one moment.
    public static func read(customerID: String, on db: isolated PostgresConnection) throws -> CustomerSummary? {
        guard let customer = try db.query("SELECT account_id, email, name FROM customers WHERE id = $1::uuid",
                                          [customerID]).first else { return nil }
        let subscriptions = try db.query(Self.subscriptions(of: customerID))
        return CustomerSummary(customerID: customerID, accountID: try customer.decode(0), email: try customer.decodeOptional(1),
                               name: try customer.decode(2), subscriptions: subscriptions,
                               entitlements: try Entitlement.held(by: customerID, on: db))
    }
}

extension CustomerSummary {
    /// The customer's subscriptions from every source, oldest first; with `purchaseID` only the one mirroring
    /// that store purchase.
    public static func subscriptions(of customerID: String, purchaseID: Int64? = nil) -> PostgresQuery<[Subscription]> {
        PostgresQuery("""
            SELECT s.id, s.source, pl.code, pp.code, pp.amount_minor, pp.currency, s.status, s.store_state,
                   s.current_period_end, s.expires_at, s.grace_ends_at, s.auto_renew, s.cancelled_at,
                   p.connection_id, p.lineage
            FROM customer_subscriptions s
            JOIN plan_prices pp ON pp.id = s.plan_price_id
            JOIN plans pl ON pl.id = pp.plan_id
            LEFT JOIN store_purchases p ON p.id = s.purchase_id
            WHERE s.customer_id = $1::uuid AND ($2::bigint IS NULL OR s.purchase_id = $2)
            ORDER BY s.id
            """, [customerID, purchaseID]) { rows in
            try rows.map { row in
                Subscription(
                    id: try row.decode(0), source: try row.decode(1), planCode: try row.decode(2),
                    priceCode: try row.decode(3), price: Money(minorUnits: try row.decode(4), currency: try row.decode(5)),
                    status: try row.decode(6), storeState: try row.decodeOptional(7),
                    currentPeriodEnd: try row.decodeOptional(8), expiresAt: try row.decodeOptional(9),
                    graceEndsAt: try row.decodeOptional(10), autoRenew: try row.decode(11),
                    cancelledAt: try row.decodeOptional(12), connectionID: try row.decodeOptional(13),
                    lineage: try row.decodeOptional(14))
            }
        }
    }

    /// `read` in a read-only REPEATABLE READ transaction of its own: subscriptions and the entitlements they
    /// grant as of one moment, however the mirror moves meanwhile.
    public static func read(customerID: String, pool: PostgresPool) async throws -> CustomerSummary? {
        try await pool.transaction { db in
            try db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try read(customerID: customerID, on: db)
        }
    }
}
