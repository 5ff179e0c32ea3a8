import Crypto
import Foundation
import Mirror
import Postgres
import StoreModel
import TestSupport

/// What every database test of the mirror starts from, in the test's own database: one account with one store
/// connection and one store product mapped to a plan price. Helpers go through `Catalog` and `AccountTokens`,
/// as the CLI does, never through hand-written rows.
struct MirrorFixture: Sendable {
    static let product = "com.example.pro.monthly"
    static let appIdentifier = "com.example.app"

    let database: TestDatabase
    let accountID: Int64
    let connection: StoreConnection
    let planPriceID: Int64

    static func make(_ database: TestDatabase, store: Store = .apple, environment: StoreEnvironment = .production,
                     requireIssuedTokens: Bool = true, host: String = "billing.example.com") async throws -> MirrorFixture {
        let (accountID, connection, planPriceID) = try await database.pool.transaction { db in
            let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ($1) RETURNING id", [host])[0].decode(0)
            var new = Catalog.NewConnection(accountID: accountID, store: store, appIdentifier: appIdentifier,
                                            environment: environment)
            new.requireIssuedTokens = requireIssuedTokens
            let connection = try Catalog.addConnection(new, on: db)
            let price = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: "pro-monthly",
                                                 amount: Money(minorUnits: 999, currency: "USD"), on: db)
            try Catalog.mapProduct(connectionID: connection.id, productID: product, planPriceID: price, on: db)
            return (accountID, connection, price)
        }
        return MirrorFixture(database: database, accountID: accountID, connection: connection, planPriceID: planPriceID)
    }

    func addCustomer() async throws -> String {
        let accountID = accountID
        return try await database.pool.transaction { db in try Catalog.addCustomer(accountID: accountID, on: db) }
    }

    /// An issued account token of a new customer of this account.
    func customerWithToken() async throws -> (customer: String, token: String) {
        let customer = try await addCustomer()
        return (customer, try await issueToken(for: customer).token)
    }

    func issueToken(for customer: String, rotate: Bool = false) async throws -> AccountTokens.Issued {
        try await database.pool.transaction { db in
            try AccountTokens.issue(customerID: customer, rotate: rotate, sha256: { Digest.sha256($0) }, on: db)
        }
    }

    func revoke(_ token: String) async throws -> Bool {
        try await database.pool.transaction { db in try AccountTokens.revoke(token: token, on: db) }
    }

    func addPlanPrice(planCode: String, priceCode: String, minorUnits: Int64) async throws -> Int64 {
        let accountID = accountID
        return try await database.pool.transaction { db in
            try Catalog.addPlanPrice(accountID: accountID, planCode: planCode, priceCode: priceCode,
                                     amount: Money(minorUnits: minorUnits, currency: "USD"), on: db)
        }
    }

    func map(_ productID: String, basePlanID: String? = nil, to planPriceID: Int64) async throws {
        let connectionID = connection.id
        try await database.pool.transaction { db in
            try Catalog.mapProduct(connectionID: connectionID, productID: productID, basePlanID: basePlanID,
                                   planPriceID: planPriceID, on: db)
        }
    }

    /// Applies `snapshot` in a transaction of its own, as a job does.
    @discardableResult
    func apply(_ snapshot: StoreSnapshot) async throws -> Mirror.Outcome {
        let connection = connection
        return try await database.pool.transaction { db in try Mirror.apply(snapshot, connection: connection, on: db) }
    }

    func rows(_ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> PostgresRows {
        try await database.pool.query(sql, parameters)
    }

    func count(_ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> Int {
        try await rows(sql, parameters)[0].decode(0)
    }

    /// Row counts of everything `Mirror.apply` writes, to show that something wrote nothing.
    func mirrorRowCounts() async throws -> [String: Int] {
        let row = try await rows("""
            SELECT (SELECT count(*) FROM store_purchases), (SELECT count(*) FROM customer_subscriptions),
                   (SELECT count(*) FROM invoices), (SELECT count(*) FROM payments), (SELECT count(*) FROM refunds),
                   (SELECT count(*) FROM purchase_events)
            """)[0]
        return try ["store_purchases": row.decode(0), "customer_subscriptions": row.decode(1), "invoices": row.decode(2),
                    "payments": row.decode(3), "refunds": row.decode(4), "purchase_events": row.decode(5)]
    }
}

/// Store snapshots and charges on a fixed calendar, so every date a test checks is exact to the second.
enum Fake {
    static let epoch = Date(timeIntervalSince1970: 1_780_000_000)

    static func day(_ n: Int) -> Date { epoch.addingTimeInterval(Double(n) * 86_400) }

    static func charge(_ transactionID: String, product: String = MirrorFixture.product, minorUnits: Int64 = 999,
                       currency: String = "USD", day n: Int = 0, reason: String = "purchase",
                       refund: StoreRefund? = nil, seenDay: Int? = nil) -> StoreCharge {
        StoreCharge(transactionID: transactionID, productID: product, amount: Money(minorUnits: minorUnits, currency: currency),
                    chargedAt: day(n), periodStart: day(n), periodEnd: day(n + 30), reason: reason, refund: refund,
                    seenAt: seenDay.map(day))
    }

    static func refund(minorUnits: Int64 = 999, currency: String = "USD", day n: Int, kind: String = "full",
                       reason: String? = "customer request") -> StoreRefund {
        StoreRefund(amount: Money(minorUnits: minorUnits, currency: currency), refundedAt: day(n), kind: kind, reason: reason)
    }

    /// `refundsReversible` defaults to what the store's translator sets: Apple's refunds are, Google's are not.
    static func snapshot(lineage: String = "2000000000000001", store: Store = .apple,
                         environment: StoreEnvironment = .production, product: String = MirrorFixture.product,
                         basePlanID: String? = nil, state: StoreState = .active, autoRenew: Bool = true,
                         inFreeTrial: Bool = false, ownership: Ownership = .purchased, token: String?,
                         charges: [StoreCharge] = [], asOfDay: Int = 0, reference: String = "notification-1",
                         event: String = "SUBSCRIBED/INITIAL_BUY", refundsReversible: Bool? = nil) -> StoreSnapshot {
        StoreSnapshot(store: store, lineage: lineage, environment: environment, productID: product, basePlanID: basePlanID,
                      state: state, periodStart: day(asOfDay), expiresAt: day(asOfDay + 30), graceEndsAt: nil,
                      autoRenew: autoRenew, inFreeTrial: inFreeTrial, ownership: ownership, accountToken: token,
                      charges: charges, refundsReversible: refundsReversible ?? (store == .apple), asOf: day(asOfDay),
                      source: SnapshotSource(kind: "notification", reference: reference, event: event),
                      raw: #"{"as_of_day": \#(asOfDay), "state": "\#(state.rawValue)"}"#)
    }
}
