import Accounts
import Mirror
import TestSupport
import Testing

/// `POST /api/v1/mobile-stores/purchases` against the App Store and Play simulators: the store's answer decides
/// what is mirrored, through the worker's re-fetch and `Mirror.apply`, with the customer as claimant.
@Suite struct PurchaseRegistrationTests {
    static let path = "/api/v1/mobile-stores/purchases"

    static func apple(_ customer: String, _ transactionID: String) -> String {
        #"{"customer_id":"\#(customer)","store":"apple","transaction_id":"\#(transactionID)"}"#
    }

    @Test func mirrorsANewApplePurchaseFromTheStoresAnswerAndLinksIt() async throws {
        try await APIHarness.with { api in
            let token = try await api.accessToken()
            let customer = try await api.customerWithToken()
            let bought = try await api.buyOnAppStore(appAccountToken: customer.token)
            let answer = try await api.send("POST", Self.path, json: Self.apple(customer.id, bought.transactionId),
                                            bearer: token)
            #expect(answer.status == 200, "\(answer.text)")
            let json = try answer.json
            #expect(json["linked"] as? Bool == true)
            #expect(json["linked_now"] as? Bool == true)
            #expect(json["sandbox"] as? Bool == false)
            let subscription = try #require(json["subscription"] as? [String: Any])
            #expect(subscription["plan"] as? String == "pro")
            #expect(subscription["amount"] as? String == "9.99")
            #expect(subscription["currency"] as? String == "USD")
            #expect(subscription["status"] as? String == "active")
            #expect(subscription["store_state"] as? String == "active")
            #expect(subscription["lineage"] as? String == bought.originalTransactionId)
            #expect(subscription["expires_at"] as? String != nil)
            let entitlements = try #require(json["entitlements"] as? [[String: Any]])
            #expect(entitlements.map { $0["key"] as? String } == ["pro"])
            #expect(try await api.scalar("SELECT count(*) FROM invoices WHERE customer_id = $1::uuid", [customer.id],
                                         as: Int.self) == 1)
        }
    }

    @Test func registeringAgainResyncsTheSameRows() async throws {
        try await APIHarness.with { api in
            let token = try await api.accessToken()
            let customer = try await api.addCustomer()
            let bought = try await api.buyOnAppStore()
            let first = try await api.send("POST", Self.path, json: Self.apple(customer, bought.transactionId), bearer: token)
            try await api.apple.renew(bought.originalTransactionId, silent: true)
            let second = try await api.send("POST", Self.path, json: Self.apple(customer, bought.transactionId), bearer: token)
            #expect(first.status == 200 && second.status == 200, "\(first.text) \(second.text)")
            #expect(try first.json["subscription_id"] as? Int == second.json["subscription_id"] as? Int)
            #expect(try second.json["linked_now"] as? Bool == false)
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 1)
            #expect(try await api.scalar("SELECT count(*) FROM invoices", as: Int.self) == 2, "the renewal is booked once")
        }
    }

    @Test func claimsAPendingPurchaseWithItsInvoices() async throws {
        try await APIHarness.with { api in
            let bought = try await api.buyOnAppStore()
            #expect(try await api.mirrorAsANotificationWould(bought.originalTransactionId) == nil, "a pending claim")
            #expect(try await api.scalar("SELECT count(*) FROM invoices WHERE customer_id IS NULL", as: Int.self) == 1)
            let customer = try await api.addCustomer()
            let answer = try await api.send("POST", Self.path, json: Self.apple(customer, bought.transactionId),
                                            bearer: try await api.accessToken())
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.json["linked_now"] as? Bool == true)
            #expect(try await api.scalar("SELECT count(*) FROM invoices WHERE customer_id = $1::uuid AND subscription_id IS NOT NULL",
                                         [customer], as: Int.self) == 1)
        }
    }

    @Test func aPurchaseLinkedToAnotherCustomerIsRefusedAndNothingChanges() async throws {
        try await APIHarness.with { api in
            let token = try await api.accessToken()
            let owner = try await api.customerWithToken()
            let bought = try await api.buyOnAppStore(appAccountToken: owner.token)
            #expect(try await api.send("POST", Self.path, json: Self.apple(owner.id, bought.transactionId), bearer: token)
                .status == 200)
            let before = try await api.scalar("SELECT updated_at::text FROM store_purchases", as: String.self)
            let thief = try await api.addCustomer()
            let answer = try await api.send("POST", Self.path, json: Self.apple(thief, bought.transactionId), bearer: token)
            #expect(answer.status == 409, "\(answer.text)")
            #expect(try answer.json["status"] as? Bool == false)
            #expect(try await api.scalar("SELECT customer_id::text FROM store_purchases", as: String.self) == owner.id)
            #expect(try await api.scalar("SELECT updated_at::text FROM store_purchases", as: String.self) == before)
            #expect(try await api.scalar("SELECT count(*) FROM customer_subscriptions WHERE customer_id = $1::uuid", [thief],
                                         as: Int.self) == 0)
        }
    }

    @Test func aPurchaseTaggedWithAnotherCustomersRevokedTokenIsRefused() async throws {
        try await APIHarness.with { api in
            let owner = try await api.customerWithToken()
            _ = try await api.database.pool.transaction { db in try AccountTokens.revoke(token: owner.token.uuidString, on: db) }
            let bought = try await api.buyOnAppStore(appAccountToken: owner.token)
            let other = try await api.addCustomer()
            let answer = try await api.send("POST", Self.path, json: Self.apple(other, bought.transactionId),
                                            bearer: try await api.accessToken())
            #expect(answer.status == 409, "\(answer.text)")
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    @Test func aSandboxPurchaseOnAProductionConnectionIsAnEnvironmentMismatch() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let bought = try await api.buyOnAppStore(sandbox: true)
            let answer = try await api.send("POST", Self.path, json: Self.apple(try await api.addCustomer(), bought.transactionId),
                                            bearer: try await api.accessToken())
            #expect(answer.status == 422, "\(answer.text)")
            #expect(try (answer.json["message"] as? String)?.hasPrefix("Environment mismatch") == true)
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    @Test func aPurchaseNoStoreKnowsIsUnprocessable() async throws {
        var options = APIHarness.Options()
        options.appleSandbox = true
        try await APIHarness.with(options) { api in
            let answer = try await api.send("POST", Self.path, json: Self.apple(try await api.addCustomer(), "2000000999999"),
                                            bearer: try await api.accessToken())
            #expect(answer.status == 422, "\(answer.text)")
            #expect(try answer.json["message"] as? String == "The store does not know this purchase.")
        }
    }

    @Test(arguments: [false, true])
    func theStoreFailingOrLimitingIsServiceUnavailableWithRetryAfter(rateLimited: Bool) async throws {
        try await APIHarness.with { api in
            let bought = try await api.buyOnAppStore()
            try api.makeAppleUnavailable(rateLimited: rateLimited)
            let answer = try await api.send("POST", Self.path, json: Self.apple(try await api.addCustomer(), bought.transactionId),
                                            bearer: try await api.accessToken())
            #expect(answer.status == 503, "\(answer.text)")
            let retryAfter = try #require(answer.header("retry-after").flatMap(Int.init))
            #expect(rateLimited ? (1...8).contains(retryAfter) : retryAfter >= 1)
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    @Test func ofTwoCustomersRegisteringOnePurchaseAtOnceExactlyOneWins() async throws {
        try await APIHarness.with { api in
            let token = try await api.accessToken()
            let bought = try await api.buyOnAppStore()
            let customers = [try await api.addCustomer(), try await api.addCustomer()]
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for customer in customers {
                    group.addTask {
                        try await api.send("POST", Self.path, json: Self.apple(customer, bought.transactionId), bearer: token).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.sorted() == [200, 409])
            #expect(try await api.scalar("SELECT count(*) FROM customer_subscriptions", as: Int.self) == 1)
            #expect(try await api.scalar("SELECT count(*) FROM invoices", as: Int.self) == 1)
        }
    }

    @Test func mirrorsAGooglePurchaseAndQueuesItsAcknowledgement() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let customer = try await api.customerWithToken()
            let bought = try await api.buyOnPlay(obfuscatedAccountId: customer.token.uuidString)
            let purchaseToken = try #require(bought.purchaseToken)
            let answer = try await api.send("POST", Self.path, json: """
                {"customer_id":"\(customer.id)","store":"google_play","purchase_token":"\(purchaseToken)"}
                """, bearer: try await api.accessToken())
            #expect(answer.status == 200, "\(answer.text)")
            let subscription = try #require(try answer.json["subscription"] as? [String: Any])
            #expect(subscription["source"] as? String == "google")
            #expect(subscription["amount"] as? String == "9.99")
            #expect(try await api.scalar("SELECT count(*) FROM jobs WHERE kind = 'google.acknowledge'", as: Int.self) == 1)
        }
    }

    @Test func aGoogleTestPurchaseOnAProductionConnectionIsAnEnvironmentMismatch() async throws {
        var options = APIHarness.Options()
        options.google = true
        try await APIHarness.with(options) { api in
            let bought = try await api.buyOnPlay(testPurchase: true)
            let answer = try await api.send("POST", Self.path, json: """
                {"customer_id":"\(try await api.addCustomer())","store":"google_play","purchase_token":"\(try #require(bought.purchaseToken))"}
                """, bearer: try await api.accessToken())
            #expect(answer.status == 422, "\(answer.text)")
            #expect(try await api.scalar("SELECT count(*) FROM store_purchases", as: Int.self) == 0)
        }
    }

    /// Field rules, each with the message the answer leads with.
    @Test(arguments: [
        (#"{"store":"apple","transaction_id":"1"}"#, "customer_id", "customer_id is required"),
        (#"{"customer_id":"C","transaction_id":"1"}"#, "store", "store is required"),
        (#"{"customer_id":"C","store":"amazon"}"#, "store", "store must be one of apple, google_play"),
        (#"{"customer_id":"C","store":"apple"}"#, "transaction_id", "transaction_id is required for the App Store"),
        (#"{"customer_id":"C","store":"google_play"}"#, "purchase_token", "purchase_token is required for Google Play"),
        (#"{"customer_id":"C","store":"apple","transaction_id":"1 2"}"#, "transaction_id",
         "transaction_id must be letters, digits, '.', '-' or '_', at most 64 characters"),
        (#"{"customer_id":"C","store":"apple","transaction_id":"1","connection_id":"x"}"#, "connection_id",
         "connection_id must be an integer"),
        (#"{"customer_id":"00000000-0000-4000-8000-000000000000","store":"apple","transaction_id":"1"}"#, "customer_id",
         "Customer not found"),
    ])
    func validatesEveryField(body: String, field: String, message: String) async throws {
        try await APIHarness.with { api in
            let answer = try await api.sendForNewCustomer("POST", Self.path, template: body)
            #expect(answer.status == 422, "\(answer.text)")
            let json = try answer.json
            #expect(json["message"] as? String == message)
            #expect((json["errors"] as? [String: [String]])?[field]?.first == message)
        }
    }
}
