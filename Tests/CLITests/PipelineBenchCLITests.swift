import Foundation
import TestSupport
import Testing

/// `storesync-dev bench pipeline`: the real binary runs a store's whole path against a fresh database, the
/// simulator in a process of its own, and reports what landed, with the same fields for both stores. Behaviour
/// only; speed depends on the machine.
@Suite(.serialized) struct PipelineBenchCLITests {
    /// Runs the benchmark against `database`; it must succeed and print exactly one JSON report, with every
    /// notification accepted and mirrored and the timing fields both stores report.
    private static func run(store: String, notifications: Int,
                            database: TestDatabase) async throws -> (stdout: String, report: [String: Any]) {
        let result = try await ChildProcess.run(
            "storesync-dev", ["bench", "pipeline", "--store", store, "--notifications", String(notifications),
                              "--store-latency-ms", "0"],
            environment: ["DATABASE_URL": database.url, "STORESYNC_LOG_LEVEL": "warning"], timeout: .seconds(120))
        #expect(result.status == 0, "stderr: \(result.stderr.suffix(2000))")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "stdout: \(result.stdout)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
        #expect(report["benchmark"] as? String == "pipeline" && report["store"] as? String == store)
        #expect(report["notifications"] as? Int == notifications)
        #expect(report["accepted"] as? Int == notifications && report["mirrored"] as? Int == notifications)
        for field in ["notifications_per_sec", "wall_s", "peak_rss_mib", "storesync_cpu_s", "storesync_cpu_ms_per_notification",
                      "stores_cpu_s", "stores_cpu_ms_per_notification"] {
            #expect(report[field] is Double, "\(field) missing in \(result.stdout)")
        }
        let latency = try #require(report["latency_ms"] as? [String: Any])
        #expect(latency["p50"] is Double && latency["p99"] is Double)
        return (result.stdout, report)
    }

    @Test func fortyNotificationsAreAllMirroredAndReported() async throws {
        try await TestDatabase.with { database in
            let (_, report) = try await Self.run(store: "apple", notifications: 40, database: database)
            #expect(report["dead_letters"] as? Int == 0)
            #expect(report["invoices"] as? Int == 40)
            #expect(report["subscriptions"] as? Int == 10)
            // Each notification re-fetches its lineage: subscription statuses, then the history since the last
            // revision (a retried attempt fetches again).
            #expect((report["store_calls_per_notification"] as? Double ?? 0) >= 2)
            #expect(report["store_calls_per_notification_by_quota_bucket"] as? [String: Double]
                == ["subscription_statuses": 1, "transaction_history": 1])
            #expect(try await database.pool.query("SELECT count(*) FROM notification_receipts WHERE outcome = 'mirrored'")[0]
                .decode(0, as: Int.self) == 40)
        }
    }

    @Test func googleReportsTheSameFiguresAndWaitsForAcknowledgements() async throws {
        try await TestDatabase.with { database in
            let (stdout, report) = try await Self.run(store: "google", notifications: 24, database: database)
            #expect(report["dead_letters"] as? Int == 0 && report["left_in_queue"] as? Int == 0)
            // Every purchase and renewal is an order, so an invoice.
            #expect(report["invoices"] as? Int == 24)
            #expect(report["subscriptions"] as? Int == 6)
            // Each of the six linked purchases is acknowledged once, after its first mirror.
            let followUps = try #require(report["follow_up_jobs"] as? [String: Any])
            #expect(followUps["google.acknowledge"] as? Int == 6, "stdout: \(stdout)")
            // Each notification re-fetches its purchase.
            #expect((report["store_calls_per_notification"] as? Double ?? 0) >= 1)
            let calls = try #require(report["store_calls"] as? [String: Any])
            #expect((calls.first { $0.key.contains("subscriptionsv2") }?.value as? Int ?? 0) >= 24, "calls: \(calls)")
            // Each notification's subscriptionsv2.get, and each purchase's acknowledgement: 6 of 24.
            let buckets = try #require(report["store_calls_per_notification_by_quota_bucket"] as? [String: Double])
            #expect(buckets["subscriptions"] == 1 && buckets["subscription_updates"] == 0.25, "buckets: \(buckets)")
            #expect((buckets["orders"] ?? 0) > 0, "buckets: \(buckets)")
            #expect(try await database.pool.query("""
                SELECT count(*) FROM notification_receipts WHERE store = 'google' AND outcome = 'mirrored'
                """)[0].decode(0, as: Int.self) == 24)
        }
    }

    @Test(arguments: [
        (["--notifications", "40", "--store-latency-ms", "0"], "--store apple|google is required"),
        (["--store", "amazon", "--notifications", "40", "--store-latency-ms", "0"], "--store must be apple|google, not \"amazon\""),
        (["--store", "apple", "--store-latency-ms", "0"], "--notifications N is required"),
        (["--store", "apple", "--notifications", "40"], "--store-latency-ms L is required"),
        (["--store", "apple", "--notifications", "1000", "--store-latency-ms", "0", "--subscriptions", "4"],
         "--subscriptions (at least N/200, at most N) must be an integer in 5...1000"),
        (["--store", "apple", "--notifications", "40", "--store-latency-ms", "0", "--rate", "0"],
         "--rate must be an integer in 1...1000000"),
    ])
    func badArgumentsExitTwoWithAReason(arguments: [String], message: String) async throws {
        let result = try await ChildProcess.run("storesync-dev", ["bench", "pipeline"] + arguments,
                                                environment: ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
    }
}
