import Accounts
import AppStore
import Crypto
import Foundation
import HTTP
import Mirror
import Queue
import Simulator
import StoreModel
import TestPKI
import Testing

/// The spec's rules end to end: linking, environments, mapping, forged input, store faults, consumption.
@Suite struct AppleRulesTests {
    @Test func anUnknownTokenLeavesThePurchasePendingClaimWithItsCharges() async throws {
        try await Pipeline.with { pipeline in
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: UUID()).originalTransactionId
            let untagged = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990,
                                                                  currency: "USD").originalTransactionId
            try await pipeline.settle()
            for lineage in [lineage, untagged] {
                #expect(try await pipeline.purchase(lineage)?.customerID == nil)
                #expect(try await pipeline.purchase(lineage)?.state == "active")
                #expect(try await pipeline.subscription(lineage) == nil)
                #expect(try await pipeline.invoices(lineage).map(\.customerID) == [nil])
            }
        }
    }

    @Test func aRevokedTokenStillLinksItsCustomer() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            _ = try await pipeline.database.pool.transaction { db in
                try AccountTokens.revoke(token: customer.token.uuidString, on: db)
            }
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            #expect(try await pipeline.purchase(lineage)?.customerID == customer.id)
        }
    }

    @Test(arguments: [(true, false), (false, true)])
    func aRawCustomerIDLinksOnlyWhenIssuedTokensAreNotRequired(requireIssued: Bool, links: Bool) async throws {
        var options = Pipeline.Options()
        options.requireIssuedTokens = requireIssued
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: UUID(uuidString: customer.id)!)
                .originalTransactionId
            try await pipeline.settle()
            #expect(try await pipeline.purchase(lineage)?.customerID == (links ? customer.id : nil))
            #expect((try await pipeline.subscription(lineage) != nil) == links)
        }
    }

    @Test func aNotificationFromTheOtherEnvironmentIsSkippedAndWritesNothing() async throws {
        var options = Pipeline.Options()
        options.otherEnvironmentSimulator = true
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let sandbox = try #require(pipeline.otherSimulator)
            let buy = try await sandbox.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                  appAccountToken: customer.token)
            #expect(buy.notification?.delivery.httpStatus == 200)
            try await pipeline.settle()
            #expect(try await pipeline.receiptOutcome(buy.notification!.notificationUUID) == "skipped: environment mismatch")
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM invoices") == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
            #expect(sandbox.requestCounts.values.reduce(0, +) == 0)
        }
    }

    @Test func anUnmappedProductDeadLettersUntilMappedAndReplayedOnce() async throws {
        var options = Pipeline.Options()
        options.mappedProducts = []
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            #expect(try await pipeline.deadLetterReasons() == [
                "product pro.monthly is not mapped on connection \(pipeline.connection.id)",
            ])
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM notification_receipts") == 0)

            try await pipeline.database.pool.transaction { db in
                try Catalog.mapProduct(connectionID: pipeline.connection.id, productID: "pro.monthly",
                                       planPriceID: pipeline.planPrices["pro.monthly"]!, on: db)
            }
            let deadLetters = DeadLetters(pool: pipeline.database.pool)
            _ = try await deadLetters.retry(ids: try await deadLetters.ids())
            _ = try await deadLetters.retry(ids: try await deadLetters.ids())
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(try await pipeline.invoices(lineage).count == 1)
            #expect(try await deadLetters.count() == 0)
        }
    }

    /// Refused at receipt, with nothing stored; and should a forgery ever get past ingest (a root trusted
    /// there and withdrawn since), the worker's own verification dead-letters it before any store call.
    @Test func aForgedNotificationIsRefusedAtReceiptAndByTheWorker() async throws {
        try await Pipeline.with { pipeline in
            let forger = try LocalApplePKI.generate()
            let claims: [String: Any] = [
                "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString, "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "data": ["bundleId": Pipeline.bundleID, "appAppleId": Pipeline.appAppleID, "environment": "Production"],
            ]
            #expect(try await pipeline.postAppleNotification(claims, signer: forger) == 401)
            #expect(try await pipeline.count("SELECT count(*) FROM jobs") == 0)
            #expect(pipeline.metrics.render().contains(
                #"storesync_webhook_refused_total{route="/webhook/apple",reason="VERIFICATION_FAILURE"} 1"#))

            try await pipeline.storeSkippingReceiptChecks(try pipeline.appleBody(claims, signer: forger),
                                                          kind: "apple.notification")
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1)
            #expect(reasons.first?.hasPrefix("verification failed: VERIFICATION_FAILURE") == true, "\(reasons)")
            #expect(pipeline.metrics.render().contains(
                #"storesync_verification_failures_total{store="apple",code="VERIFICATION_FAILURE"} 1"#))
            #expect(pipeline.simulator.requestCounts.values.reduce(0, +) == 0)
        }
    }

    /// A Sandbox connection need not know its App Apple ID, so a Production notification (verified, then
    /// skipped) is checked against the ID it claims. A forged one claiming another ID must not decide what
    /// genuine ones are checked against.
    @Test func aForgedClaimDoesNotDecideHowGenuineNotificationsAreVerified() async throws {
        var options = Pipeline.Options()
        options.environment = .sandbox
        options.connectionKnowsAppAppleID = false
        options.otherEnvironmentSimulator = true
        try await Pipeline.with(options) { pipeline in
            let forged: [String: Any] = [
                "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString, "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "data": ["bundleId": Pipeline.bundleID, "appAppleId": 666, "environment": "Production"],
            ]
            let forger = try LocalApplePKI.generate()
            #expect(try await pipeline.postAppleNotification(forged, signer: forger) == 401)
            try await pipeline.storeSkippingReceiptChecks(try pipeline.appleBody(forged, signer: forger),
                                                          kind: "apple.notification")
            try await pipeline.settle()
            let production = try #require(pipeline.otherSimulator)
            let customer = try await pipeline.customer()
            let buy = try await production.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                     appAccountToken: customer.token)
            try await pipeline.settle()
            #expect(try await pipeline.receiptOutcome(try #require(buy.notification).notificationUUID)
                == "skipped: environment mismatch")
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.contains("VERIFICATION_FAILURE") == true, "\(reasons)")
        }
    }

    /// An external purchase token names no environment; its id does (`SANDBOX…`). Either way it names no
    /// transaction to re-fetch.
    @Test(arguments: [("4f1c2a", "recorded: EXTERNAL_PURCHASE_TOKEN/UNREPORTED names no transaction"),
                      ("SANDBOX_4f1c2a", "skipped: environment mismatch")])
    func anExternalPurchaseTokenIsRecordedInItsOwnEnvironment(id: String, outcome: String) async throws {
        try await Pipeline.with { pipeline in
            let uuid = UUID().uuidString
            let claims: [String: Any] = [
                "notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED", "notificationUUID": uuid,
                "version": "2.0", "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "externalPurchaseToken": ["externalPurchaseId": id, "bundleId": Pipeline.bundleID,
                                          "appAppleId": Pipeline.appAppleID,
                                          "tokenCreationDate": Int64(Date().timeIntervalSince1970 * 1000)],
            ]
            #expect(try await pipeline.postAppleNotification(claims) == 200)
            try await pipeline.settle()
            #expect(try await pipeline.receiptOutcome(uuid) == outcome)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
        }
    }

    /// As on Google Play, only subscriptions are mirrored: a one-time purchase is recorded, not re-fetched
    /// (the statuses endpoint knows no such lineage, so asking would only dead-letter it).
    @Test func aOneTimePurchaseIsRecordedWithoutARefetch() async throws {
        try await Pipeline.with { pipeline in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let transaction = try pipeline.pki.sign(try JSONSerialization.data(withJSONObject: [
                "transactionId": "5000000001", "originalTransactionId": "5000000001", "bundleId": Pipeline.bundleID,
                "productId": "coins.100", "type": "Consumable", "quantity": 1, "purchaseDate": now, "signedDate": now,
                "environment": "Production", "inAppOwnershipType": "PURCHASED", "price": 990, "currency": "USD",
            ] as [String: Any]))
            let uuid = UUID().uuidString
            #expect(try await pipeline.postAppleNotification([
                "notificationType": "ONE_TIME_CHARGE", "notificationUUID": uuid, "version": "2.0", "signedDate": now,
                "data": ["bundleId": Pipeline.bundleID, "appAppleId": Pipeline.appAppleID, "environment": "Production",
                         "signedTransactionInfo": transaction],
            ]) == 200)
            try await pipeline.settle()
            #expect(try await pipeline.receiptOutcome(uuid)
                == "recorded: ONE_TIME_CHARGE for a Consumable (one-time purchases are not mirrored yet)")
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(pipeline.simulator.requestCounts.values.reduce(0, +) == 0)
        }
    }

    /// A Production connection without its App Apple ID cannot verify anything: ingest answers 503 (Apple
    /// retries for days, long enough to fix the setting) and stores nothing; a notification stored anyway
    /// dead-letters at once with the reason, since retrying cannot fix it.
    @Test func aProductionConnectionWithoutItsAppAppleIDIsRefusedUntilFixed() async throws {
        var options = Pipeline.Options()
        options.connectionKnowsAppAppleID = false
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let bought = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                appAccountToken: customer.token)
            #expect(bought.notification?.delivery.httpStatus == 503)
            #expect(try await pipeline.count("SELECT count(*) FROM jobs") == 0)

            let body = try JSONSerialization.data(withJSONObject: ["signedPayload": try #require(bought.notification).signedPayload])
            try await pipeline.storeSkippingReceiptChecks(body, kind: "apple.notification")
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons == ["connection \(pipeline.connection.id): INVALID_APP_IDENTIFIER: a Production connection "
                                + "needs its App Apple ID"], "\(reasons)")
            #expect(pipeline.retriedJobs() == 0)
        }
    }

    @Test func storeRateLimitsAndOutagesAreRetriedUntilTheySucceed() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            try pipeline.simulator.rateLimitNextRequests(1, retryAfter: .milliseconds(200), format: .seconds)
            try pipeline.simulator.failNextRequests(2)
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(try await pipeline.invoices(lineage).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }

    /// A 401 may be a token Apple saw expire before the host's clock did: the job retries with a fresh one a
    /// few times, and a key Apple does not know still ends in the dead-letter table with Apple's answer.
    @Test func aRefusedAPITokenRetriesAFewTimesThenDeadLetters() async throws {
        try await Pipeline.with { pipeline in
            try await pipeline.database.pool.query("UPDATE store_connections SET api_key_id = 'UNKNOWN1' WHERE id = $1",
                                                   [pipeline.connection.id])
            _ = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD")
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.hasPrefix("App Store API unauthorized") == true, "\(reasons)")
            #expect(reasons.first?.contains("answered 401") == true, "\(reasons)")
            #expect(pipeline.retriedJobs() == 2)
        }
    }

    /// A worker keeps a connection's clients across jobs, yet a key changed after they were built is the one the
    /// connection's next job signs with (the connection's settings revision moved), and so is the key set back.
    @Test func aKeyChangedAfterTheClientsWereBuiltIsUsedFromTheNextJobOn() async throws {
        try await Pipeline.with { pipeline in
            let id = pipeline.connection.id
            let keyID: String = try await pipeline.database.pool.query(
                "SELECT api_key_id FROM store_connections WHERE id = $1", [id])[0].decode(0)
            let first = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD")
            try await pipeline.settle()
            #expect(try await pipeline.invoices(first.originalTransactionId).count == 1)

            try await pipeline.database.pool.query("UPDATE store_connections SET api_key_id = 'UNKNOWN1' WHERE id = $1", [id])
            _ = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD")
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.hasPrefix("App Store API unauthorized") == true, "\(reasons)")

            try await pipeline.database.pool.query("UPDATE store_connections SET api_key_id = $2 WHERE id = $1", [id, keyID])
            let third = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD")
            try await pipeline.settle()
            #expect(try await pipeline.invoices(third.originalTransactionId).count == 1)
            #expect(try await pipeline.deadLetterReasons().count == 1)
        }
    }

    @Test(arguments: [true, false])
    func aConsumptionRequestIsAnsweredOnlyWithConsent(consented: Bool) async throws {
        try await withRecordedUsage(consented: consented, preference: "DECLINE") { pipeline, buy in
            try await pipeline.simulator.requestConsumption(buy.originalTransactionId, reason: .unintendedPurchase)
            try await pipeline.settle()
            let sent = pipeline.simulator.consumptionRequests
            #expect(sent.count == (consented ? 1 : 0))
            #expect(sent.first?.transactionId == (consented ? buy.transactionId : nil))
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }

    /// Apple computes an auto-renewable subscription's consumed share and rejects one given (the simulator
    /// answers 400 as Apple does): a percentage the backend recorded is left out, not the whole answer.
    @Test func aRecordedPercentageIsLeftOutOfAnAutoRenewableSubscriptionsAnswer() async throws {
        try await withRecordedUsage(percentage: 50_000, preference: "GRANT_PRORATED") { pipeline, buy in
            try await pipeline.simulator.requestConsumption(buy.originalTransactionId, reason: .unintendedPurchase)
            try await pipeline.settle()
            let sent = pipeline.simulator.consumptionRequests
            #expect(sent.count == 1 && sent.first?.refundPreference == "GRANT_PRORATED")
            #expect(sent.first?.body.contains("consumptionPercentage") == false, "\(sent.first?.body ?? "")")
            #expect(try await pipeline.deadLetterReasons().isEmpty)
        }
    }

    /// A connection that answers consumption requests and a subscriber whose usage the backend recorded.
    private func withRecordedUsage(consented: Bool = true, percentage: Int? = nil, preference: String,
                                   _ body: (Pipeline, ScenarioResult) async throws -> Void) async throws {
        var options = Pipeline.Options()
        options.answerConsumptionRequests = true
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let buy = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                             appAccountToken: customer.token)
            try await pipeline.database.pool.query("""
                INSERT INTO consumption_usage (store_transaction_id, customer_consented, delivery_status,
                                               sample_content_provided, consumption_percentage, refund_preference)
                VALUES ($1, $2, 'DELIVERED', false, $3, $4)
                """, [buy.transactionId, consented, percentage, preference])
            try await body(pipeline, buy)
        }
    }

    /// Every `apple.consumption` job names a transaction from a verified `CONSUMPTION_REQUEST`, so Apple not
    /// finding it yet is eventual consistency: a few attempts, then a dead letter with Apple's answer.
    @Test func aConsumptionAnswerForATransactionAppleCannotFindYetRetriesThenDeadLetters() async throws {
        var options = Pipeline.Options()
        options.answerConsumptionRequests = true
        try await Pipeline.with(options) { pipeline in
            let unknown = "2000000999999999"
            try await pipeline.database.pool.query("""
                INSERT INTO consumption_usage (store_transaction_id, customer_consented, delivery_status,
                                               sample_content_provided, refund_preference)
                VALUES ($1, true, 'DELIVERED', false, 'DECLINE')
                """, [unknown])
            let deadline = Int64(Date().addingTimeInterval(3600).timeIntervalSince1970 * 1000)
            let payload = #"{"connectionID":\#(pipeline.connection.id),"transactionID":"\#(unknown)","#
                + #""deadlineMilliseconds":\#(deadline),"notificationUUID":"n-1","productType":"Auto-Renewable Subscription"}"#
            _ = try await JobQueue(pool: pipeline.database.pool).enqueue(NewJob(kind: "apple.consumption", payload: payload))
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.contains("4040010") == true, "\(reasons)")
            #expect(pipeline.retriedJobs() == 3)
            #expect(pipeline.simulator.requestCounts[.consumption] == 4)
        }
    }

    @Test func aConsumptionAnswerPastItsDeadlineDeadLetters() async throws {
        var options = Pipeline.Options()
        options.answerConsumptionRequests = true
        try await Pipeline.with(options) { pipeline in
            let past = Int64(Date().addingTimeInterval(-60).timeIntervalSince1970 * 1000)
            let payload = #"{"connectionID":\#(pipeline.connection.id),"transactionID":"1","deadlineMilliseconds":\#(past),"#
                + #""notificationUUID":"n-1","productType":"Auto-Renewable Subscription"}"#
            _ = try await JobQueue(pool: pipeline.database.pool).enqueue(NewJob(kind: "apple.consumption", payload: payload))
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.hasPrefix("deadline passed") == true, "\(reasons)")
            #expect(pipeline.simulator.consumptionRequests.isEmpty)
        }
    }
}
