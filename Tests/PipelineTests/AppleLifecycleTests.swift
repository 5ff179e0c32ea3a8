import Foundation
import Simulator
import Testing

/// Subscription lifecycles end to end: simulator → ingest → worker → App Store API → mirror.
@Suite struct AppleLifecycleTests {
    @Test func initialBuyLinksTheCustomerAndBooksOneInvoice() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let buy = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                             appAccountToken: customer.token)
            #expect(buy.notification?.delivery.httpStatus == 200)
            try await pipeline.settle()
            let lineage = buy.originalTransactionId
            let subscription = try #require(try await pipeline.subscription(lineage))
            #expect(subscription.status == "active" && subscription.state == "active" && subscription.autoRenew)
            #expect(subscription.planPriceID == pipeline.planPrices["pro.monthly"])
            #expect(try await pipeline.purchase(lineage)?.customerID == customer.id)
            let invoices = try await pipeline.invoices(lineage)
            #expect(invoices.map(\.amount) == [999] && invoices.first?.customerID == customer.id)
            #expect(invoices.first?.transactionID == buy.transactionId)
            #expect(try await pipeline.count("SELECT count(*) FROM payments") == 1)
            #expect(try await pipeline.receiptOutcome(buy.notification!.notificationUUID) == "mirrored")
            let metrics = pipeline.metrics.render()
            #expect(metrics.contains(#"storesync_store_api_requests_total{store="apple",endpoint="statuses",status="2xx"} 1"#),
                    "\(metrics)")
            #expect(metrics.contains(#"storesync_store_api_requests_total{store="apple",endpoint="history",status="2xx"} 1"#))
        }
    }

    @Test func everyRenewalIsOneInvoice() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let buy = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                             appAccountToken: customer.token)
            for _ in 0..<3 { try await pipeline.simulator.renew(buy.originalTransactionId) }
            try await pipeline.settle()
            let invoices = try await pipeline.invoices(buy.originalTransactionId)
            #expect(invoices.count == 4 && Set(invoices.map(\.transactionID)).count == 4)
            #expect(try await pipeline.count("SELECT count(*) FROM payments") == 4)
            #expect(try await pipeline.subscription(buy.originalTransactionId)?.status == "active")
        }
    }

    @Test func theSameNotificationFiveTimesHasOneEffect() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let buy = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                             appAccountToken: customer.token)
            let again = try await pipeline.simulator.resendLastNotification(times: 4)
            #expect(again.allSatisfy { $0.notificationUUID == buy.notification?.notificationUUID })
            try await pipeline.settle()
            #expect(try await pipeline.invoices(buy.originalTransactionId).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_events WHERE kind = 'charge_booked'") == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM notification_receipts") == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }

    @Test func gracePeriodThenBillingRetryThenExpiry() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.simulator.failToRenew(lineage, grace: true)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "grace")
            #expect(try await pipeline.count("SELECT count(*) FROM customer_subscriptions WHERE grace_ends_at IS NOT NULL") == 1)
            try await pipeline.simulator.expireGracePeriod(lineage)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "on_hold")
            try await pipeline.simulator.expire(lineage, reason: .billingRetry)
            try await pipeline.settle()
            let subscription = try #require(try await pipeline.subscription(lineage))
            #expect(subscription.state == "expired" && subscription.status == "expired")
            #expect(try await pipeline.invoices(lineage).count == 1)
        }
    }

    @Test func billingRecoveryReactivatesAndBooksTheCharge() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.simulator.failToRenew(lineage, grace: false)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "on_hold")
            try await pipeline.simulator.recover(lineage)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(try await pipeline.invoices(lineage).count == 2)
        }
    }

    @Test func cancellingKeepsAccessUntilExpiryAsCancelled() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.simulator.cancel(lineage)
            try await pipeline.settle()
            let subscription = try #require(try await pipeline.subscription(lineage))
            #expect(subscription.status == "cancelled" && subscription.state == "active" && !subscription.autoRenew)
            #expect(try await pipeline.count("SELECT count(*) FROM customer_subscriptions WHERE cancelled_at = expires_at") == 1)
        }
    }

    @Test func refundRevokesAndBooksOneRefundThenReversalReinstates() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let buy = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                             appAccountToken: customer.token)
            try await pipeline.simulator.refund(buy.originalTransactionId)
            try await pipeline.simulator.resendLastNotification(times: 2)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(buy.originalTransactionId)?.state == "revoked")
            var refunds = try await pipeline.refunds(buy.originalTransactionId)
            #expect(refunds.count == 1 && refunds.first?.amount == 999 && refunds.first?.reversed == false)

            try await pipeline.simulator.reverseRefund(buy.originalTransactionId)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(buy.originalTransactionId)?.state == "active")
            refunds = try await pipeline.refunds(buy.originalTransactionId)
            #expect(refunds.count == 1 && refunds.first?.reversed == true)
            #expect(try await pipeline.invoices(buy.originalTransactionId).count == 1)
        }
    }

    @Test func proratedRefundIsExact() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let buy = try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD",
                                                             appAccountToken: customer.token)
            try await pipeline.simulator.refund(buy.originalTransactionId, percentage: 25_000)
            try await pipeline.settle()
            #expect(try await pipeline.refunds(buy.originalTransactionId).map(\.amount) == [2_500])
        }
    }

    @Test func upgradeChangesThePlanPriceWithoutDoubleBooking() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.simulator.upgrade(lineage, to: "pro.yearly", price: 99_990)
            try await pipeline.simulator.resendLastNotification()
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.planPriceID == pipeline.planPrices["pro.yearly"])
            #expect(try await pipeline.invoices(lineage).map(\.amount) == [999, 9_999])
            #expect(try await pipeline.count("SELECT count(*) FROM customer_subscriptions") == 1)
        }
    }

    @Test func familySharedAccessIsMirroredButNeverRevenue() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token,
                                                                 familyShared: true).originalTransactionId
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases WHERE ownership = 'family_shared'") == 1)
            #expect(try await pipeline.invoices(lineage).isEmpty)
        }
    }

    @Test func freeTrialIsTrialAndBooksNothingUntilItConverts() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token,
                                                                 freeTrial: true).originalTransactionId
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.status == "trial")
            #expect(try await pipeline.invoices(lineage).isEmpty)
            try await pipeline.simulator.renew(lineage)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.status == "active")
            #expect(try await pipeline.invoices(lineage).map(\.amount) == [999])
        }
    }
}
