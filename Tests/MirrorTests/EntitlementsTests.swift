import Accounts
import Foundation
import Mirror
import Postgres
import StoreModel
import TestSupport
import Testing

/// The entitlements a customer holds, read from the mirror: every subscription of the customer whose plan
/// grants a key, from any source, by `EntitlementRules` at the database's clock.
@Suite struct EntitlementsTests {
    /// Fake's calendar day whose 30-day period ends `days` days from today (in the past when negative).
    static func asOfDay(endingIn days: Int) -> Int {
        Int(Date().timeIntervalSince(Fake.epoch) / 86_400) - 30 + days
    }

    private static func held(_ customer: String, _ fixture: AccountFixture) async throws -> [Entitlement] {
        try await fixture.database.pool.run { db in try Entitlement.held(by: customer, on: db) }
    }

    @Test func storeAndWebSubscriptionsGrantTheirPlansKeysLongestFirst() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let accountID = fixture.accountID
            // The mapped plan "pro" grants pro and sync; a web-only plan "team" grants pro.
            let teamPrice = try await database.pool.transaction { db in
                _ = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: "pro-yearly",
                                             amount: Money(minorUnits: 9_999, currency: "USD"), period: "P1Y",
                                             entitlements: ["pro", "sync"], on: db)
                return try Catalog.addPlanPrice(accountID: accountID, planCode: "team", priceCode: "team-monthly",
                                                amount: Money(minorUnits: 2_000, currency: "EUR"), entitlements: ["pro"], on: db)
            }
            let (customer, token) = try await fixture.customerWithToken()
            let (other, otherToken) = try await fixture.customerWithToken()
            let live = Self.asOfDay(endingIn: 20)
            try await fixture.apply(Fake.snapshot(lineage: "1001", token: token, charges: [Fake.charge("t1", day: live)],
                                                  asOfDay: live))
            try await fixture.apply(Fake.snapshot(lineage: "1002", state: .expired, token: token,
                                                  charges: [Fake.charge("t2", day: live - 60)], asOfDay: live - 60))
            try await fixture.apply(Fake.snapshot(lineage: "1003", state: .onHold, token: otherToken,
                                                  charges: [Fake.charge("t3", day: live)], asOfDay: live))
            let webID: Int64 = try await fixture.rows("""
                INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, status)
                VALUES ($1, $2::uuid, $3, 'web', 'active') RETURNING id
                """, [accountID, customer, teamPrice])[0].decode(0)
            let appleID: Int64 = try await fixture.rows("""
                SELECT s.id FROM customer_subscriptions s JOIN store_purchases p ON p.id = s.purchase_id
                WHERE p.lineage = '1001'
                """)[0].decode(0)
            let storeExpiry = Fake.day(live + 30)

            let entitlements = try await Self.held(customer, fixture)
            #expect(entitlements.map(\.key) == ["pro", "sync"])
            #expect(entitlements.first?.grants == [
                EntitlementGrant(source: .web, subscriptionID: webID, expiresAt: nil),
                EntitlementGrant(source: .apple, subscriptionID: appleID, expiresAt: storeExpiry),
            ], "the expired lineage grants nothing; the web one renews, so it names the entitlement")
            #expect(entitlements.last?.grants == [EntitlementGrant(source: .apple, subscriptionID: appleID, expiresAt: storeExpiry)])
            #expect(try await Self.held(other, fixture).isEmpty, "billing retry (on hold) never entitles")
            #expect(try await Self.held(UUID().uuidString, fixture).isEmpty)
        }
    }
}
