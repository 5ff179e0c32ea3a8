import Foundation
import Testing

/// Ingest and the worker logged in as members of `storesync_ingest` and `storesync_worker` only: every read and
/// write a notification needs is granted to those roles, and no more is needed than production grants.
@Suite struct LeastPrivilegeTests {
    @Test func anAppleLifecycleNeedsNoMoreThanTheWorkerAndIngestRoles() async throws {
        var options = Pipeline.Options()
        options.leastPrivilege = true
        options.mappedProducts = ["pro.monthly"]
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.simulator.renew(lineage)
            try await pipeline.simulator.refund(lineage)
            try await pipeline.settle()
            try await pipeline.simulator.reverseRefund(lineage)
            _ = try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD")
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(try await pipeline.invoices(lineage).count == 2)
            #expect(try await pipeline.refunds(lineage).map(\.reversed) == [true])
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.contains("is not mapped") == true, "\(reasons)")
        }
    }

    @Test func aGooglePurchaseAndItsRefundNeedNoMoreThanTheWorkerAndIngestRoles() async throws {
        var options = Pipeline.Options.googleProduction
        options.leastPrivilege = true
        try await Pipeline.with(options) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let token = try #require(try await pipeline.buyOnPlay(token: customer.token).purchaseToken)
            try await play.renew(token)
            try await play.refund(token, revoke: false)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: token)
            #expect(try await pipeline.invoices(lineage).count == 2)
            #expect(try await pipeline.refunds(lineage).count == 1)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_tokens WHERE acknowledged_at IS NOT NULL") == 1)
        }
    }
}
