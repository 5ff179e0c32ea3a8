import Foundation
import Testing

/// `GET /api/v1/mobile-stores/client/entitlements`: the token customer's entitlements, the very data the
/// backend read answers, without the customer's id the token stands in for.
@Suite struct ClientEntitlementTests {
    static let path = "/api/v1/mobile-stores/client/entitlements"

    @Test func answersWhatTheBackendReadAnswersForTheTokensCustomer() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let other = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: pair.token))
            let report = try await api.sendAsApp("POST", ClientPurchaseTests.path,
                                                 json: ClientPurchaseTests.apple(bought.transactionId), pair: pair)
            #expect(report.status == 200, "\(report.text)")
            let app = try await api.sendAsApp("GET", Self.path, pair: pair)
            #expect(app.status == 200, "\(app.text)")
            #expect(app.header("content-type")?.hasPrefix("application/json") == true)
            let backend = try await api.send("GET", "/api/v1/mobile-stores/customers/\(pair.customerID)/entitlements",
                                             bearer: try await api.accessToken())
            let appEntitlements = try #require(try app.json["entitlements"] as? [[String: Any]])
            #expect(appEntitlements.map { $0["key"] as? String } == ["pro"])
            #expect(try Self.canonical(app.json["entitlements"]) == Self.canonical(backend.json["entitlements"]))
            #expect(try app.json.keys.sorted() == ["entitlements"])
            let theirs = try await api.sendAsApp("GET", Self.path, pair: other)
            #expect(theirs.text == #"{"entitlements":[]}"#, "another token's customer holds nothing of it")
        }
    }

    static func canonical(_ value: Any?) throws -> Data {
        try JSONSerialization.data(withJSONObject: try #require(value), options: [.sortedKeys])
    }
}
