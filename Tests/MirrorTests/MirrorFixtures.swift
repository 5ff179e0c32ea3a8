import Accounts
import Foundation
import Mirror
import Postgres
import StoreModel
import TestSupport

extension AccountFixture {
    /// Applies `snapshot` in a transaction of its own, as a job does.
    @discardableResult
    func apply(_ snapshot: StoreSnapshot) async throws -> Mirror.Outcome {
        let connection = connection
        return try await database.pool.transaction { db in try Mirror.apply(snapshot, connection: connection, on: db) }
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

    static func charge(_ transactionID: String, product: String = AccountFixture.product, minorUnits: Int64 = 999,
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
                         environment: StoreEnvironment = .production, product: String = AccountFixture.product,
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
