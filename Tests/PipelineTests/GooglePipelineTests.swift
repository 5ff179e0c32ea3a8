import Foundation
import Postgres
import Queue
import Simulator
import StoreModel
@testable import Sync
import Testing
import TestSupport

/// The Google Play path end to end: Play simulator → Pub/Sub push → ingest → worker → Play Developer API → mirror.
@Suite struct GooglePipelineTests {
    @Test func aPurchaseIsMirroredBookedAndAcknowledgedOnce() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let bought = try await pipeline.buyOnPlay(token: customer.token)
            #expect(bought.pushes.first?.attempts.first?.delivery.httpStatus == 200)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: bought.purchaseToken)
            let subscription = try #require(try await pipeline.subscription(lineage))
            #expect(subscription.state == "active" && subscription.status == "active")
            #expect(subscription.planPriceID == pipeline.planPrices["pro.monthly"])
            #expect(try await pipeline.invoices(lineage).map(\.amount) == [999])
            #expect(try await pipeline.invoices(lineage).first?.transactionID == bought.orderId)
            #expect(play.acknowledgements.map(\.purchaseToken) == [bought.purchaseToken!])
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases WHERE acknowledged_at IS NOT NULL") == 1)

            for _ in 0..<2 { try await play.renew(bought.purchaseToken!) }
            try await pipeline.settle()
            #expect(try await pipeline.invoices(lineage).count == 3)
            #expect(play.acknowledgements.count == 1)
            #expect(pipeline.metrics.render().contains(#"storesync_store_api_requests_total{store="google",endpoint="subscriptions",status="2xx"}"#))
        }
    }

    @Test func theSamePushFiveTimesHasOneEffect() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let customer = try await pipeline.customer()
            try #require(pipeline.play).duplicateNextPush(copies: 4)
            let bought = try await pipeline.buyOnPlay(token: customer.token)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: bought.purchaseToken)
            #expect(try await pipeline.invoices(lineage).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM notification_receipts WHERE store = 'google'") == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }

    /// A push with a bad token is refused at receipt, on every redelivery, and stores nothing: no job, no
    /// dead letter, no Play API call.
    @Test(arguments: [(PushTokenFault.wrongAudience, "wrong audience"), (.wrongEmail, "wrong email"), (.expired, "expired"),
                      (.unknownKey, "unknown key"), (.tamperedSignature, "bad signature"), (.missing, "missing token")])
    func aPushWithABadTokenIsRefusedAtReceipt(fault: PushTokenFault, code: String) async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            try play.sendBadPushTokens(fault, count: 1)
            _ = try await pipeline.buyOnPlay(token: customer.token)
            try await pipeline.settle()
            #expect(pipeline.metrics.render().contains(
                #"storesync_webhook_refused_total{route="/webhook/google-play",reason="\#(code)"}"#))
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 0)
            #expect(play.requestCount(.subscriptionsV2) == 0)
        }
    }

    /// Should a push with a bad token ever get past ingest (a key Google withdrew meanwhile), the worker's
    /// own check dead-letters it before any Play API call and writes nothing.
    @Test func aStoredPushWithABadTokenDeadLettersAndWritesNothing() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let push = try CraftedPlayPushes(pipeline).push(messageID: "forged-1", purchaseToken: "token-forged")
            try await pipeline.storeSkippingReceiptChecks(push.body, kind: "google.notification",
                                                          authorization: tamperingSignature(of: push.authorization))
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.hasPrefix("push authentication failed") == true, "\(reasons)")
            #expect(pipeline.retriedJobs() == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 0)
            #expect(play.requestCount(.subscriptionsV2) == 0)
            #expect(pipeline.metrics.render().contains(#"storesync_verification_failures_total{store="google""#))
        }
    }

    @Test func anUpgradeChainKeepsOneSubscriptionAndOneCustomer() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let first = try await pipeline.buyOnPlay(token: customer.token)
            let upgraded = try await play.upgrade(first.purchaseToken!, to: "pro.yearly", basePlanId: "yearly", price: 9_999)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: upgraded.purchaseToken)
            #expect(lineage == first.purchaseToken)
            #expect(try await pipeline.count("SELECT count(*) FROM customer_subscriptions") == 1)
            #expect(try await pipeline.subscription(lineage)?.planPriceID == pipeline.planPrices["pro.yearly"])
            #expect(try await pipeline.purchase(lineage)?.customerID == customer.id)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_tokens WHERE replaced_by IS NOT NULL") == 1)
            #expect(Set(try await pipeline.invoices(lineage).map(\.amount)) == [999, 9_999])
        }
    }

    /// Pushes for a few subscriptions arriving together, with the acknowledgements their mirrors queue: what
    /// touches one lineage commits one group commit after another, so no transaction waits on another's locks
    /// (a deadlock between two group commits retried every job in both) and nothing is retried.
    @Test func aBurstOfPushesForFewSubscriptionsCommitsWithoutRetries() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            var tokens: [String] = []
            for _ in 0..<16 {
                tokens.append(try #require(try await pipeline.buyOnPlay(token: try await pipeline.customer().token,
                                                         silent: true).purchaseToken))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for token in tokens {
                    for _ in 0..<4 { group.addTask { try await play.renew(token) } }
                }
                try await group.waitForAll()
            }
            try await pipeline.settle()
            #expect(play.acknowledgements.count == 16)
            #expect(try await pipeline.count("SELECT count(*) FROM invoices") == 80)
            #expect(pipeline.retriedJobs() == 0, "retried: \(pipeline.metrics.render())")
        }
    }

    @Test func aVoidedChargeIsOneRefundAndRevokesAccess() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let bought = try await pipeline.buyOnPlay(token: customer.token)
            try await play.refund(bought.purchaseToken!)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: bought.purchaseToken)
            #expect(try await pipeline.refunds(lineage).map(\.amount) == [999])
            // Google reports a revoked subscription as expired: access ends either way.
            #expect(try await pipeline.subscription(lineage)?.state == "expired")
        }
    }

    @Test func aChargeRefundedInPartsEndsRefundedInFull() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let (token, _, lineage) = try await pipeline.mirroredPlayPurchase()
            try await play.refund(token, revoke: false, partialAmount: 300)
            try await pipeline.settle()
            #expect(try await pipeline.refunds(lineage).map(\.amount) == [300])
            // The rest: Google's full refund event carries only what remained, the order is refunded whole.
            try await play.refund(token)
            try await pipeline.settle()
            let refunds = try await pipeline.refunds(lineage)
            #expect(refunds.map(\.amount) == [999] && refunds.allSatisfy { !$0.reversed })
            #expect(try await pipeline.database.pool.query("SELECT kind FROM refunds")[0].decode(0, as: String.self) == "full")
            #expect(try await pipeline.subscription(lineage)?.state == "expired")
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }

    @Test func aLicenceTesterPurchaseOnAProductionConnectionIsSkippedAndNotAcknowledged() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let customer = try await pipeline.customer()
            let bought = try await pipeline.buyOnPlay(token: customer.token, testPurchase: true)
            try await pipeline.settle()
            let uuid = try #require(bought.pushes.first?.messageId)
            #expect(try await pipeline.receiptOutcome(uuid) == "skipped: environment mismatch")
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 0)
            #expect(try #require(pipeline.play).acknowledgements.isEmpty)
        }
    }

    /// Mirrored normally, so acknowledged too: Google refunds and revokes an unacknowledged test purchase as well.
    @Test func aLicenceTesterPurchaseIsMirroredAndAcknowledgedOnASandboxConnection() async throws {
        var options = Pipeline.Options()
        options.googleEnvironment = .sandbox
        try await Pipeline.with(options) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let bought = try await pipeline.buyOnPlay(token: customer.token, testPurchase: true)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: bought.purchaseToken)
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(play.acknowledgements.map(\.purchaseToken) == [try #require(bought.purchaseToken)])
            #expect(play.subscription(try #require(bought.purchaseToken))?.acknowledged == true)
        }
    }

    @Test func aTokenGoogleForgotDeadLettersWithTheReason() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let bought = try await pipeline.buyOnPlay(token: nil, silent: true)
            try await play.expireLongAgo(bought.purchaseToken!)
            try await pipeline.settle()
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.contains("gone") == true, "\(reasons)")
        }
    }

    /// A service account Play Console does not let in yet (grants take up to 48 hours to apply): the push is
    /// retried, not dead-lettered, and counted for on-call; once access is granted the purchase is mirrored and
    /// acknowledged. The harness caps the two-hour wait at a few seconds.
    @Test func aRefusedServiceAccountIsRetriedUntilGrantedAndCounted() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let connection = try #require(pipeline.googleConnection)
            let customer = try await pipeline.customer()
            // Refused with a fresh access token too, as a missing permission is.
            try play.denyPermissionForNextRequests(2)
            let bought = try await pipeline.buyOnPlay(token: customer.token)
            try await pipeline.settle()
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            let lineage = try await pipeline.lineage(ofPlayToken: bought.purchaseToken)
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(play.acknowledgements.map(\.purchaseToken) == [try #require(bought.purchaseToken)])
            #expect(pipeline.retriedJobs() == 1)
            let counted = #"storesync_store_permission_denied_total{store="google",connection="\#(connection.id)"} 1"#
            #expect(pipeline.metrics.render().contains(counted), "\(pipeline.metrics.render())")
        }
    }

    @Test func billingStatesFollowTheStore() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let (token, _, lineage) = try await pipeline.mirroredPlayPurchase()
            let steps: [(String, () async throws -> PlayScenarioResult, String, String)] = [
                ("grace", { try await play.enterGracePeriod(token) }, "grace", "active"),
                ("hold", { try await play.enterAccountHold(token) }, "on_hold", "active"),
                ("recover", { try await play.recover(token) }, "active", "active"),
                ("cancel", { try await play.cancel(token) }, "active", "cancelled"),
                ("expire", { try await play.expire(token) }, "expired", "expired"),
            ]
            for (name, step, state, status) in steps {
                _ = try await step()
                try await pipeline.settle()
                let subscription = try #require(try await pipeline.subscription(lineage))
                #expect(subscription.state == state && subscription.status == status, "after \(name): \(subscription)")
            }
        }
    }

    @Test func oneAccessTokenServesManyJobsAndIsRefreshedWhenItExpires() async throws {
        try await Pipeline.with(.googleProduction) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let token = try #require(try await pipeline.buyOnPlay(token: customer.token).purchaseToken)
            for _ in 0..<3 { try await play.renew(token) }
            try await pipeline.settle()
            #expect(play.issuedAccessTokenCount == 1)
            play.expireAccessTokens()
            try await play.renew(token)
            try await pipeline.settle()
            #expect(play.issuedAccessTokenCount == 2)
            #expect(try await pipeline.invoices(try await pipeline.lineage(ofPlayToken: token)).count == 5)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }
}
