import Accounts
import Foundation
import StoreModel
import TestSupport
import Testing

/// `POST /api/v1/mobile-stores/client/purchases` against the store simulators: the app's report is a
/// registration for the token's customer, except that a sandbox purchase on a Production connection is held
/// for the session only, and that every refusal which would tell about a purchase is the same 409.
@Suite struct ClientPurchaseTests {
    static let path = "/api/v1/mobile-stores/client/purchases"
    static let cannotLink = #"{"status":false,"message":"This purchase cannot be linked to this account."}"#

    static func apple(_ transactionID: String) -> String {
        #"{"store":"apple","transaction_id":"\#(transactionID)"}"#
    }

    static func google(_ purchaseToken: String) -> String {
        #"{"store":"google_play","purchase_token":"\#(purchaseToken)"}"#
    }

    @Test func aProductionPurchaseIsMirroredAndLinkedToTheTokensCustomer() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: pair.token))
            let answer = try await api.sendAsApp("POST", Self.path, json: Self.apple(bought.transactionId), pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            let json = try answer.json
            #expect(json["sandbox"] as? Bool == false)
            #expect(json["linked"] as? Bool == true)
            let subscriptionID = try #require(json["subscription_id"] as? Int)
            let entitlements = try #require(json["entitlements"] as? [[String: Any]])
            #expect(entitlements.map { $0["key"] as? String } == ["pro"])
            #expect(entitlements.first?["subscription_id"] as? Int == subscriptionID)
            #expect(entitlements.first?["sandbox"] == nil, "a stored entitlement is no session's")
            #expect(json["customer_id"] == nil, "the app never learns the customer's id")
            #expect(try await api.scalar("SELECT customer_id::text FROM customer_subscriptions WHERE id = $1",
                                         [subscriptionID], as: String.self) == pair.customerID)
            #expect(try await api.scalar("SELECT count(*) FROM invoices WHERE customer_id = $1::uuid", [pair.customerID],
                                         as: Int.self) == 1)
        }
    }

    /// Reporting again — the SDK retries, a restore reports every purchase — re-syncs the same rows.
    @Test func reportingAgainBooksNothingTwice() async throws {
        try await APIHarness.with { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore()
            let first = try await api.sendAsApp("POST", Self.path, json: Self.apple(bought.transactionId), pair: pair)
            let traces = try await api.traces()
            let second = try await api.sendAsApp("POST", Self.path, json: Self.apple(bought.transactionId), pair: pair)
            #expect(first.status == 200 && second.status == 200, "\(first.text) \(second.text)")
            #expect(try first.json["subscription_id"] as? Int == second.json["subscription_id"] as? Int)
            #expect(try await api.traces().filter { $0.key != "purchase_events" } == traces.filter { $0.key != "purchase_events" })
        }
    }

    /// App Review, TestFlight: a purchase only Apple's Sandbox knows, on the live app's Production connection.
    @Test func anAppleSandboxPurchaseOnProductionIsHeldForTheSessionAndNothingIsRecorded() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: pair.token), sandbox: true)
            let before = try await api.traces()
            let answer = try await api.sendAsApp("POST", Self.path, json: Self.apple(bought.transactionId), pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            let json = try answer.json
            #expect(json["sandbox"] as? Bool == true)
            #expect(json["linked"] as? Bool == false)
            #expect(json.keys.contains("subscription_id") && json["subscription_id"] is NSNull)
            let entitlements = try #require(json["entitlements"] as? [[String: Any]])
            #expect(entitlements.map { $0["key"] as? String } == ["pro"])
            #expect(entitlements.first?["sandbox"] as? Bool == true)
            #expect(entitlements.first?["source"] as? String == "apple")
            #expect(entitlements.first?["subscription_id"] is NSNull)
            #expect(entitlements.first?["expires_at"] as? String != nil)
            #expect(try await api.traces() == before, "no subscription, invoice, payment, link, timeline row or job")
            let read = try await api.sendAsApp("GET", "/api/v1/mobile-stores/client/entitlements", pair: pair)
            #expect(read.text == #"{"entitlements":[]}"#, "the session's entitlements are never stored")
            let backend = try await api.send("GET", "/api/v1/mobile-stores/customers/\(pair.customerID)/entitlements",
                                             bearer: try await api.accessToken())
            #expect(try backend.json["entitlements"] as? [Any] != nil)
            #expect(try (backend.json["entitlements"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func anExpiredSandboxPurchaseGrantsNothingEvenInTheSession() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let sandbox = try #require(api.appleSandbox)
            let bought = try await api.buyOnAppStore(sandbox: true)
            try await sandbox.cancel(bought.originalTransactionId, silent: true)
            try await sandbox.expire(bought.originalTransactionId, reason: .voluntary, silent: true)
            let answer = try await api.sendAsApp("POST", Self.path, json: Self.apple(bought.transactionId), pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.text.contains(#""sandbox":true"#))
            #expect(try (answer.json["entitlements"] as? [Any])?.isEmpty == true)
        }
    }

    /// The same ownership rules hold in the session: a sandbox purchase tagged for another customer is refused.
    @Test func aSandboxPurchaseTaggedForAnotherCustomerIsRefused() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let owner = try await api.customerWithPair()
            let other = try await api.customerWithPair()
            let bought = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: owner.token), sandbox: true)
            let answer = try await api.sendAsApp("POST", Self.path, json: Self.apple(bought.transactionId), pair: other)
            #expect(answer.status == 409)
            #expect(answer.text == Self.cannotLink)
        }
    }

    /// Google licence testers: Play reports the test purchase from the same API; nothing is acknowledged.
    @Test func aGoogleTestPurchaseOnProductionIsHeldForTheSessionAndNotAcknowledged() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnPlay(obfuscatedAccountId: pair.token, testPurchase: true)
            let before = try await api.traces()
            let answer = try await api.sendAsApp("POST", Self.path, json: Self.google(try #require(bought.purchaseToken)),
                                                 pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.json["sandbox"] as? Bool == true)
            let entitlements = try #require(try answer.json["entitlements"] as? [[String: Any]])
            #expect(entitlements.map { $0["source"] as? String } == ["google"])
            #expect(try await api.traces() == before, "no acknowledgement job, no row")
        }
    }

    @Test func aGoogleProductionPurchaseIsMirroredAndItsAcknowledgementQueued() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let pair = try await api.customerWithPair()
            let bought = try await api.buyOnPlay(obfuscatedAccountId: pair.token)
            let answer = try await api.sendAsApp("POST", Self.path, json: Self.google(try #require(bought.purchaseToken)),
                                                 pair: pair)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.json["linked"] as? Bool == true)
            #expect(try await api.scalar("SELECT count(*) FROM jobs WHERE kind = 'google.acknowledge'", as: Int.self) == 1)
        }
    }

    /// Another customer's purchase, a tagged one, one no store knows and a production purchase on a Sandbox
    /// connection: one answer, byte for byte, headers included, so the endpoint tells nothing.
    @Test func everyRefusalAboutAPurchaseIsTheSame409() async throws {
        var answers: [(String, APIHarness.Answer)] = []
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let owner = try await api.customerWithPair()
            let linked = try await api.buyOnAppStore()
            #expect(try await api.sendAsApp("POST", Self.path, json: Self.apple(linked.transactionId), pair: owner).status == 200)
            let tagged = try await api.buyOnAppStore(appAccountToken: UUID(uuidString: owner.token))
            for (name, transactionID) in [("linked to another customer", linked.transactionId),
                                          ("tagged for another customer", tagged.transactionId),
                                          ("unknown to every store", "2000000999999")] {
                answers.append((name, try await api.sendAsApp("POST", Self.path, json: Self.apple(transactionID),
                                                              pair: try await api.customerWithPair())))
            }
        }
        // Apple's Sandbox knows no production purchase (that is "unknown" above); Google's one API does.
        options = APIHarness.Options()
        options.environment = .sandbox
        options.google = true
        try await APIHarness.with(options) { api in
            let bought = try await api.buyOnPlay()
            answers.append(("a production purchase on a Sandbox connection",
                            try await api.sendAsApp("POST", Self.path, json: Self.google(try #require(bought.purchaseToken)),
                                                    pair: try await api.customerWithPair())))
        }
        let first = try #require(answers.first?.1)
        #expect(first.status == 409)
        #expect(first.text == Self.cannotLink)
        for (name, answer) in answers {
            #expect(answer.status == 409, "\(name): \(answer.text)")
            #expect(answer.body == first.body, "\(name): \(answer.text)")
            #expect(Self.comparable(answer.headers) == Self.comparable(first.headers), "\(name)")
        }
    }

    @Test(arguments: [false, true])
    func theStoreFailingOrLimitingIsServiceUnavailableWithRetryAfter(rateLimited: Bool) async throws {
        try await APIHarness.with { api in
            let bought = try await api.buyOnAppStore()
            try api.makeAppleUnavailable(rateLimited: rateLimited)
            let answer = try await api.sendAsApp("POST", Self.path, json: Self.apple(bought.transactionId),
                                                 pair: try await api.customerWithPair())
            #expect(answer.status == 503, "\(answer.text)")
            #expect(try #require(answer.header("retry-after").flatMap(Int.init)) >= 1)
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    /// Field rules, each with the message the answer leads with; the customer is never the body's to name.
    @Test(arguments: [
        (#"{"transaction_id":"1"}"#, "store", "store is required"),
        (#"{"store":"amazon"}"#, "store", "store must be one of apple, google_play"),
        (#"{"store":"apple"}"#, "transaction_id", "transaction_id is required for the App Store"),
        (#"{"store":"google_play"}"#, "purchase_token", "purchase_token is required for Google Play"),
        (#"{"store":"google_play","purchase_token":""}"#, "purchase_token", "purchase_token is required"),
        (#"{"store":"apple","transaction_id":"1 2"}"#, "transaction_id",
         "transaction_id must be letters, digits, '.', '-' or '_', at most 64 characters"),
        (#"{"store":"apple","transaction_id":"1","customer_id":"00000000-0000-4000-8000-000000000000"}"#, "customer_id",
         "customer_id is not accepted: the purchase is for the account token's customer"),
        (#"{"store":"apple","transaction_id":"1","connection_id":0}"#, "connection_id",
         "connection_id must be between 1 and 9223372036854775807"),
    ])
    func validatesEveryField(body: String, field: String, message: String) async throws {
        try await APIHarness.with { api in
            let answer = try await api.sendAsApp("POST", Self.path, json: body, pair: try await api.customerWithPair())
            #expect(answer.status == 422, "\(answer.text)")
            let json = try answer.json
            #expect(json["message"] as? String == message)
            #expect((json["errors"] as? [String: [String]])?[field]?.first == message)
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    /// Headers as two answers can share them: the date is the clock's.
    static func comparable(_ headers: [(name: String, value: String)]) -> [String] {
        headers.filter { $0.name != "date" }.map { "\($0.name): \($0.value)" }
    }
}
