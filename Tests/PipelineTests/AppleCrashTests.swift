import Foundation
import Simulator
import TestSupport
import Testing

/// Real `storesync work` processes against the pipeline: what a crash or an unlucky order does to the mirror.
@Suite struct AppleCrashTests {
    private func startWorker(_ pipeline: Pipeline, concurrency: Int) throws -> ChildProcess {
        try ChildProcess("storesync", ["work", "--concurrency", String(concurrency), "--lease-duration", "1s",
                                       "--poll-interval", "100ms", "--grace-period", "1s", "--metrics-listen", "off"],
                         environment: ["DATABASE_URL": pipeline.database.url, "STORESYNC_LOG_LEVEL": "error"])
    }

    @Test func aWorkerKilledMidRunStillBooksExactlyOneInvoicePerTransaction() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            var lineages: [String] = []
            for _ in 0..<6 {
                let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                     appAccountToken: customer.token).originalTransactionId
                for _ in 0..<3 { try await pipeline.simulator.renew(lineage) }
                lineages.append(lineage)
            }
            // Slow store answers keep jobs in flight, so the kill lands between fetches and commits.
            try pipeline.simulator.setLatency(.milliseconds(30))
            let first = try startWorker(pipeline, concurrency: 8)
            try await eventually("the first worker to commit some jobs") {
                try await pipeline.count("SELECT count(*) FROM notification_receipts") >= 3
            }
            first.signal(SIGKILL)
            _ = try await first.wait()
            #expect(try await pipeline.count("SELECT count(*) FROM jobs") > 0, "the kill came too late to test anything")

            let second = try startWorker(pipeline, concurrency: 8)
            try await pipeline.settle()
            second.signal(SIGTERM)
            #expect(try await second.wait() == 0)
            #expect(try await pipeline.count("SELECT count(*) FROM invoices") == 24)
            #expect(try await pipeline.count("SELECT count(DISTINCT store_transaction_id) FROM invoices") == 24)
            #expect(try await pipeline.count("SELECT count(*) FROM payments") == 24)
            #expect(try await pipeline.count("SELECT count(*) FROM customer_subscriptions") == 6)
            // (The workers' own schedules run too; the simulator's clock, moved 18 periods ahead by the renewals,
            // makes its notification history refuse the reconcile sweep's window — not what this test is about.)
            let reasons = try await pipeline.deadLetterReasons(kind: "apple.notification")
            #expect(reasons.isEmpty, "\(reasons)")
        }
    }

    @Test func notificationsProcessedNewestFirstStillLeaveTheNewestState() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.simulator.renew(lineage)
            try await pipeline.simulator.cancel(lineage)
            // The newest notification first, the oldest last.
            try await pipeline.database.pool.query("UPDATE jobs SET priority = id")
            let worker = try startWorker(pipeline, concurrency: 1)
            try await pipeline.settle()
            worker.signal(SIGTERM)
            #expect(try await worker.wait() == 0)
            let subscription = try #require(try await pipeline.subscription(lineage))
            #expect(subscription.status == "cancelled" && subscription.state == "active" && !subscription.autoRenew)
            #expect(try await pipeline.invoices(lineage).count == 2)
        }
    }
}
