import Accounts
import Foundation
import TestSupport
import Testing

/// `GET /api/v1/mobile-stores/customers/{customer}/entitlements`: what the customer holds now across web, App
/// Store and Google Play, each entitlement named by its longest grant with every grant listed, for the host's
/// customers only; every answer carries the account's budget headers.
@Suite struct EntitlementEndpointTests {
    static func path(_ customer: String) -> String { "/api/v1/mobile-stores/customers/\(customer)/entitlements" }

    static func expectBudgetHeaders(_ answer: APIHarness.Answer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.header("x-ratelimit-limit") == "500", sourceLocation: sourceLocation)
        let remaining = answer.header("x-ratelimit-remaining").flatMap(Int.init)
        #expect(remaining.map { (0..<500).contains($0) } == true, "\(answer.headers)", sourceLocation: sourceLocation)
    }

    /// An unknown customer, a path segment that is no UUID, and another tenant's customer are all the same 404.
    @Test(arguments: ["unknown", "not-a-uuid", "foreign"])
    func aCustomerThatIsNotTheAccountsIsNotFound(kind: String) async throws {
        try await APIHarness.with { api in
            let customer: String
            switch kind {
            case "unknown": customer = "7d0c6d0e-0000-4000-8000-000000000000"
            case "not-a-uuid": customer = "cus_123"
            default:
                customer = try await api.database.pool.transaction { db in
                    try Catalog.addCustomer(accountID: try Catalog.addAccount(host: "other.test", on: db), on: db)
                }
            }
            let answer = try await api.send("GET", Self.path(customer), bearer: try await api.accessToken())
            #expect(answer.status == 404, "\(answer.text)")
            #expect(answer.text == #"{"status":false,"message":"Customer not found"}"#)
            #expect(answer.header("content-type") == "application/json")
            Self.expectBudgetHeaders(answer)
        }
    }

    @Test func aCustomerWithoutSubscriptionsHoldsNothing() async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let answer = try await api.send("GET", Self.path(customer), bearer: try await api.accessToken())
            #expect(answer.status == 200, "\(answer.text)")
            let json = try answer.json
            #expect(json["customer_id"] as? String == customer)
            #expect((json["entitlements"] as? [Any])?.isEmpty == true, "\(answer.text)")
            Self.expectBudgetHeaders(answer)
        }
    }

    /// The path's customer id is read case-insensitively, and answered in its canonical lowercase form.
    @Test func anUppercaseCustomerIDIsTheSameCustomer() async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let answer = try await api.send("GET", Self.path(customer.uppercased()), bearer: try await api.accessToken())
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.json["customer_id"] as? String == customer)
        }
    }

    /// A web subscription that is Active and not cancelled entitles with no end.
    @Test func anActiveWebSubscriptionEntitlesWithNoEnd() async throws {
        try await APIHarness.with { api in
            let customer = try await api.addCustomer()
            let subscription = try await api.addWebSubscription(customer: customer, status: "active")
            let answer = try await api.send("GET", Self.path(customer), bearer: try await api.accessToken())
            #expect(answer.status == 200, "\(answer.text)")
            let grants = try Self.proNamedByWeb(answer, subscription: subscription)
            #expect(grants.map { $0["source"] as? String } == ["web"])
            Self.expectBudgetHeaders(answer)
        }
    }

    /// Web, App Store and Google Play grants of one key are one entitlement: the web grant, which has no end,
    /// names it, and the store grants, which end at the store's expiry, are listed after it.
    @Test func grantsOfEveryChannelAreOneEntitlementNamedByTheLongest() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let bearer = try await api.accessToken()
            let customer = try await api.customerWithToken()

            let bought = try await api.buyOnAppStore(appAccountToken: customer.token)
            let apple = try await api.send("POST", "/api/v1/mobile-stores/purchases", json: """
                {"customer_id":"\(customer.id)","store":"apple","transaction_id":"\(bought.transactionId)"}
                """, bearer: bearer)
            #expect(apple.status == 200, "\(apple.text)")
            let afterApple = try await api.send("GET", Self.path(customer.id), bearer: bearer)
            let appleOnly = try #require(try afterApple.json["entitlements"] as? [[String: Any]])
            try #require(appleOnly.count == 1, "\(afterApple.text)")
            #expect(appleOnly[0]["key"] as? String == "pro")
            #expect(appleOnly[0]["source"] as? String == "apple")
            #expect(appleOnly[0]["expires_at"] as? String != nil, "a store grant ends at the store's expiry: \(afterApple.text)")

            let played = try await api.buyOnPlay(obfuscatedAccountId: customer.token.uuidString)
            let google = try await api.send("POST", "/api/v1/mobile-stores/purchases", json: """
                {"customer_id":"\(customer.id)","store":"google_play","purchase_token":"\(try #require(played.purchaseToken))"}
                """, bearer: bearer)
            #expect(google.status == 200, "\(google.text)")
            let afterGoogle = try await api.send("GET", Self.path(customer.id), bearer: bearer)
            let bothStores = try #require(try afterGoogle.json["entitlements"] as? [[String: Any]])
            try #require(bothStores.count == 1, "\(afterGoogle.text)")
            let storeGrants = try #require(bothStores[0]["grants"] as? [[String: Any]])
            #expect(Set(storeGrants.compactMap { $0["source"] as? String }) == ["apple", "google"], "\(afterGoogle.text)")

            let web = try await api.addWebSubscription(customer: customer.id, status: "active")
            let answer = try await api.send("GET", Self.path(customer.id), bearer: bearer)
            #expect(answer.status == 200, "\(answer.text)")
            let json = try answer.json
            #expect(json["customer_id"] as? String == customer.id)
            let grants = try Self.proNamedByWeb(answer, subscription: web)
            #expect(grants.count == 3, "\(answer.text)")
            #expect(grants.first?["source"] as? String == "web", "longest first: \(answer.text)")
            #expect(Set(grants.compactMap { $0["source"] as? String }) == ["web", "apple", "google"])
            let ends = grants.dropFirst().compactMap { $0["expires_at"] as? String }
            #expect(ends.count == 2, "store grants end: \(answer.text)")
            #expect(ends == ends.sorted(by: >), "then the latest end first: \(answer.text)")
            #expect(Set(grants.compactMap { $0["subscription_id"] as? Int }).count == 3)
            Self.expectBudgetHeaders(answer)
        }
    }

    /// Every read spends one request of the budget, whatever it answers.
    @Test func everyReadSpendsTheBudget() async throws {
        try await APIHarness.with { api in
            let bearer = try await api.accessToken()
            let customer = try await api.addCustomer()
            var remaining: [Int] = []
            for path in [Self.path(customer), Self.path("nope"), Self.path(UUID().uuidString), Self.path(customer)] {
                let answer = try await api.send("GET", path, bearer: bearer)
                Self.expectBudgetHeaders(answer)
                remaining.append(try #require(answer.header("x-ratelimit-remaining").flatMap(Int.init)))
            }
            #expect(remaining == [499, 498, 497, 496])
        }
    }

    /// The answer's one entitlement, `pro`, named by the web subscription `subscription` (no end: longest);
    /// its grants.
    static func proNamedByWeb(_ answer: APIHarness.Answer, subscription: Int64) throws -> [[String: Any]] {
        let entitlements = try #require(try answer.json["entitlements"] as? [[String: Any]])
        try #require(entitlements.count == 1, "one key, however many grants: \(answer.text)")
        let pro = entitlements[0]
        #expect(pro["key"] as? String == "pro")
        #expect(pro["source"] as? String == "web")
        #expect(pro["subscription_id"] as? Int == Int(subscription))
        #expect(pro["expires_at"] is NSNull, "\(answer.text)")
        return try #require(pro["grants"] as? [[String: Any]])
    }
}
