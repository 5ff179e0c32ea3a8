import AppStore
import Foundation
import HTTP
import Simulator
import Testing

/// Scenario commands notify the ingest as Apple does, with payloads that verify against the simulator's root.
@Suite struct ScenarioNotificationTests {
    @Test func subscribeRenewTwiceRefundNotifiesAndChangesStatusAndHistory() async throws {
        let harness = try Harness()
        let subscribed = try await harness.simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD")
        let id = subscribed.originalTransactionId
        let first = try await harness.simulator.renew(id)
        let second = try await harness.simulator.renew(id)
        let refunded = try await harness.simulator.refund(id)

        for result in [subscribed, first, second, refunded] {
            #expect(result.notification?.delivery.outcome == .answered)
            #expect(result.notification?.delivery.httpStatus == 200)
        }
        let received = harness.ingest.received.current
        #expect(received.count == 4)
        #expect(received.allSatisfy { $0.host == Fixture.ingestHost && $0.contentType == "application/json" })

        let notifications = try harness.ingest.signedPayloads().map { try harness.verifier.verifyNotification($0) }
        #expect(notifications.map(\.notificationType) == ["SUBSCRIBED", "DID_RENEW", "DID_RENEW", "REFUND"])
        #expect(notifications.map(\.subtype) == ["INITIAL_BUY", nil, nil, nil])
        #expect(notifications.map { $0.data?.status } == [1, 1, 1, 5])
        #expect(Set(notifications.map(\.notificationUUID)).count == 4)
        #expect(notifications.allSatisfy { $0.version == "2.0" && $0.data?.bundleVersion == "1.0" })

        let transactions = try notifications.map { try harness.verifier.verifyTransaction(#require($0.data?.signedTransactionInfo)) }
        #expect(transactions.map(\.transactionId) == [id, first.transactionId, second.transactionId, second.transactionId])
        #expect(transactions.allSatisfy { $0.originalTransactionId == id && $0.price == 9990 && $0.currency == "USD" })
        #expect(transactions.map(\.transactionReason) == ["PURCHASE", "RENEWAL", "RENEWAL", "RENEWAL"])
        // Each renewal starts where the previous period ended, and is signed at that moment.
        #expect(transactions[1].purchaseDate == transactions[0].expiresDate)
        #expect(transactions[2].purchaseDate == transactions[1].expiresDate)
        #expect(notifications[2].signedDate == transactions[2].purchaseDate)
        #expect(transactions[3].revocationType == "REFUND_FULL")
        #expect(transactions[3].revocationDate == notifications[3].signedDate)
        let renewal = try harness.verifier.verifyRenewalInfo(#require(notifications[3].data?.signedRenewalInfo))
        #expect(renewal.autoRenewStatus == 0)

        let status = try jsonObject(try await harness.send("GET", "/inApps/v1/subscriptions/\(first.transactionId)"))
        let group = try #require((status["data"] as? [[String: Any]])?.first)
        let last = try #require((group["lastTransactions"] as? [[String: Any]])?.first)
        #expect(last["status"] as? Int == 5)
        let latest = try harness.verifier.verifyTransaction(#require(last["signedTransactionInfo"] as? String))
        #expect(latest.transactionId == second.transactionId && latest.revocationType == "REFUND_FULL")

        let history = try jsonObject(try await harness.send("GET", "/inApps/v2/history/\(id)"))
        let signed = try #require(history["signedTransactions"] as? [String])
        // Ascending by modification: the refunded renewal was changed last.
        #expect(try signed.map { try harness.verifier.verifyTransaction($0).transactionId } == [id, first.transactionId, second.transactionId])
        await harness.close()
    }

    @Test func silentCommandsChangeStateAndSendNothing() async throws {
        let harness = try Harness()
        let id = try await harness.subscribe(silent: true)
        let renewed = try await harness.simulator.renew(id, silent: true)
        let cancelled = try await harness.simulator.cancel(id, silent: true)

        #expect(renewed.notification == nil && cancelled.notification == nil)
        #expect(harness.ingest.received.current.isEmpty)
        let subscription = try #require(harness.simulator.subscription(id))
        #expect(subscription.transactionIds == [id, renewed.transactionId])
        #expect(subscription.renewalInfo.autoRenewStatus == false)
        // The server API already tells the new truth: what a resync must find.
        let status = try jsonObject(try await harness.send("GET", "/inApps/v1/subscriptions/\(id)"))
        let last = try #require(((status["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first)
        let renewal = try harness.verifier.verifyRenewalInfo(#require(last["signedRenewalInfo"] as? String))
        #expect(renewal.autoRenewStatus == 0)
        await harness.close()
    }

    @Test func resendPostsTheSameNotificationAgainByteForByte() async throws {
        let harness = try Harness()
        let result = try await harness.simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD")
        let again = try await harness.simulator.resendLastNotification(times: 2)

        #expect(again.count == 2)
        #expect(again.allSatisfy { $0.notificationUUID == result.notification?.notificationUUID })
        let bodies = harness.ingest.received.current.map(\.body)
        #expect(bodies.count == 3)
        #expect(Set(bodies).count == 1)
        await harness.close()
    }

    @Test func theIngestsAnswerIsReported() async throws {
        let harness = try Harness()
        harness.ingest.status.withLock { $0 = 503 }
        let result = try await harness.simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD")
        #expect(result.notification?.delivery.outcome == .answered)
        #expect(result.notification?.delivery.httpStatus == 503)
        await harness.close()
    }

    @Test func anUnreachableIngestIsAFailedDeliveryNotAnError() async throws {
        let harness = try Harness()
        await harness.ingest.server.stop(grace: .zero)
        let result = try await harness.simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD")
        #expect(result.notification?.delivery.outcome == .failed)
        #expect(harness.simulator.subscription(result.originalTransactionId)?.status == .active)
        await harness.close()
    }

    @Test func withoutATargetNotificationsAreSignedButNotSent() async throws {
        let harness = try Harness(notify: false)
        let result = try await harness.simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD")
        let notification = try #require(result.notification)
        #expect(notification.delivery.outcome == .notSent)
        #expect(try harness.verifier.verifyNotification(notification.signedPayload).notificationType == "SUBSCRIBED")
        await harness.close()
    }

    @Test func aConsumptionRequestCarriesItsReasonAndTheDisputedTransaction() async throws {
        let harness = try Harness()
        let id = try await harness.subscribe()
        let renewed = try await harness.simulator.renew(id, silent: true)
        let result = try await harness.simulator.requestConsumption(id, transactionId: id, reason: .unintendedPurchase)

        #expect(result.transactionId == id)
        let notification = try harness.verifier.verifyNotification(#require(result.notification?.signedPayload))
        #expect(notification.notificationType == "CONSUMPTION_REQUEST")
        #expect(notification.data?.consumptionRequestReason == "UNINTENDED_PURCHASE")
        let transaction = try harness.verifier.verifyTransaction(#require(notification.data?.signedTransactionInfo))
        #expect(transaction.transactionId == id && transaction.transactionId != renewed.transactionId)
        await harness.close()
    }

    @Test func aSandboxAppsPayloadsSaySandboxAndCarryNoAppAppleID() async throws {
        let harness = try Harness(apps: [Fixture.app(environment: .sandbox)])
        let result = try await harness.simulator.subscribe(productId: Fixture.monthly, price: 9990, currency: "USD")
        let notification = try harness.verifier.verifyNotification(#require(result.notification?.signedPayload))
        #expect(notification.data?.environment == .sandbox)
        #expect(notification.data?.appAppleId == nil)
        #expect(try harness.verifier.verifyTransaction(#require(notification.data?.signedTransactionInfo)).environment == .sandbox)
        await harness.close()
    }
}
