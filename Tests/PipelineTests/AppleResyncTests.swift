import Accounts
import Foundation
import Logging
import Mirror
import Postgres
import Queue
import Simulator
@testable import Sync
import TestSupport
import Testing
@testable import Worker

/// The daily resync: what notifications missed is repaired through the same path and recorded as drift;
/// the fan-out happens once per day across processes and is spread at the connection's rate.
@Suite struct AppleResyncTests {
    private func runDailySync(_ pipeline: Pipeline, period: String = "2026-11-29") async throws {
        _ = try await JobQueue(pool: pipeline.database.pool).enqueue(NewJob(
            kind: "sync.daily", payload: #"{"schedule":"daily-sync","period":"\#(period)"}"#))
    }

    private func driftKinds(_ pipeline: Pipeline) async throws -> [String] {
        try await pipeline.database.pool.query("""
            SELECT detail->>'kinds' FROM purchase_events WHERE kind = 'drift' ORDER BY id
            """).map { try $0.decode(0) }
    }

    @Test func aSilentRenewalIsBookedByTheDailyResyncAndCountedAsDrift() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            try await pipeline.simulator.renew(lineage, silent: true)
            try await runDailySync(pipeline)
            try await pipeline.settle()
            #expect(try await pipeline.invoices(lineage).count == 2)
            #expect(try await driftKinds(pipeline) == [#"["charge"]"#])
            #expect(pipeline.metrics.render().contains(
                #"storesync_resync_drift_total{connection="\#(pipeline.connection.id)",kind="charge"} 1"#))
            // Nothing new the second day: no drift.
            try await runDailySync(pipeline, period: "2026-11-30")
            try await pipeline.settle()
            #expect(try await driftKinds(pipeline).count == 1)
        }
    }

    @Test func silentRefundsAndExpiriesAreRepairedAsDrift() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let refunded = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                  appAccountToken: customer.token).originalTransactionId
            let expiring = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                  appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            try await pipeline.simulator.refund(refunded, silent: true)
            try await pipeline.simulator.cancel(expiring, silent: true)
            try await pipeline.simulator.expire(expiring, reason: .voluntary, silent: true)
            try await runDailySync(pipeline)
            try await pipeline.settle()
            #expect(try await pipeline.subscription(refunded)?.state == "revoked")
            #expect(try await pipeline.refunds(refunded).count == 1)
            #expect(try await pipeline.subscription(expiring)?.state == "expired")
            #expect(Set(try await driftKinds(pipeline)) == [#"["state", "refund"]"#, #"["state"]"#])
        }
    }

    @Test func lineagesExpiredBeyondTheHorizonAreNotRefetched() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let live = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                              appAccountToken: customer.token, silent: true)
            let old = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                             appAccountToken: customer.token, silent: true)
            let recent = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                appAccountToken: customer.token, silent: true)
            try await pipeline.database.pool.query("""
                INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state, expires_at,
                                             snapshot, as_of)
                VALUES ($1, $2, 'Production', 'pro.monthly', 'active', now() + interval '20 days', '{}', now() - interval '1 day'),
                       ($1, $3, 'Production', 'pro.monthly', 'expired', now() - interval '61 days', '{}', now()),
                       ($1, $4, 'Production', 'pro.monthly', 'revoked', now() - interval '59 days', '{}', now())
                """, [pipeline.connection.id, live.originalTransactionId, old.originalTransactionId,
                      recent.originalTransactionId])
            try await pipeline.database.pool.transaction { db in
                _ = try ResyncPlannerProbe.enqueue(pipeline, on: db)
            }
            let lineages: [String] = try await pipeline.database.pool.query(
                "SELECT payload->>'lineage' FROM jobs WHERE kind = 'apple.resync' ORDER BY run_at").map { try $0.decode(0) }
            #expect(Set(lineages) == [live.originalTransactionId, recent.originalTransactionId])
        }
    }

    @Test func theFanOutIsSpreadAtTheConnectionsResyncRateAndNeverDoubled() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            for index in 0..<10 {
                try await pipeline.database.pool.query("""
                    INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state,
                                                 expires_at, snapshot, as_of)
                    VALUES ($1, $2, 'Production', 'pro.monthly', 'active', now() + interval '20 days', '{}', now() - interval '1 day')
                    """, [pipeline.connection.id, "20000000000000\(index)"])
            }
            for _ in 0..<2 {
                try await pipeline.database.pool.transaction { db in _ = try ResyncPlannerProbe.enqueue(pipeline, on: db) }
            }
            let times: [Date] = try await pipeline.database.pool.query(
                "SELECT run_at FROM jobs WHERE kind = 'apple.resync' ORDER BY run_at").map { try $0.decode(0) }
            #expect(times.count == 10)
            // Production Apple: 50 requests/s per endpoint, half of it for resync → one lineage every 40 ms.
            let gaps = zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
            #expect(gaps.allSatisfy { abs($0 - 0.04) < 0.001 }, "\(gaps)")
        }
    }

    /// Runs the day's fan-out in this process, as a worker holding its lease would; returns its outcome.
    @Test func aFanOutWhoseSpreadOutlastsTheDaySaysSo() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            try await addLivePurchases(pipeline, connection: pipeline.connection, lineages: (0..<100).map { "5000000000\($0)" })
            var settings = ResyncSettings()
            settings.rateShare = 0.00001  // the planner's slowest pace, 0.001 resyncs/s: 100 take 27.8 h
            let connection = pipeline.connection.id
            #expect(try await fanOut(pipeline, period: "2026-11-29", settings: settings)
                    == "planned 100 resyncs; spread longer than a day: connection \(connection) (27 h)")
            // The first ten finish; the next day queues those ten again, behind the ninety still waiting, never
            // beside them. One of those failed and waits out a long backoff: it holds nothing back.
            try await pipeline.database.pool.query("""
                DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE kind = 'apple.resync' ORDER BY run_at LIMIT 10)
                """)
            try await pipeline.database.pool.query("""
                UPDATE jobs SET attempt = 1, run_at = now() + interval '100 hours'
                WHERE id = (SELECT id FROM jobs WHERE kind = 'apple.resync' ORDER BY run_at LIMIT 1)
                """)
            let backlogEnd: Date = try await pipeline.database.pool.query(
                "SELECT max(run_at) FROM jobs WHERE kind = 'apple.resync' AND attempt = 0")[0].decode(0)
            #expect(try await fanOut(pipeline, period: "2026-11-30", settings: settings)
                    == "planned 10 resyncs; spread longer than a day: connection \(connection) (30 h)")
            let new: [Date] = try await pipeline.database.pool.query(
                "SELECT run_at FROM jobs WHERE kind = 'apple.resync' AND attempt = 0 AND run_at > $1 ORDER BY run_at",
                [backlogEnd])
                .map { try $0.decode(0) }
            #expect(new.count == 10)
            #expect(zip(new, new.dropFirst()).allSatisfy { abs($1.timeIntervalSince($0) - 1000) < 0.001 })
            #expect(abs((new.first ?? .distantPast).timeIntervalSince(backlogEnd) - 1000) < 0.001)
        }
    }

    private func fanOut(_ pipeline: Pipeline, period: String, settings: ResyncSettings = ResyncSettings()) async throws -> String {
        let job = LeasedJob(id: 1, kind: DailySyncHandler.kind.name, payload: #"{"schedule":"daily-sync","period":"\#(period)"}"#,
                            raw: nil, headers: nil, priority: -5, attempt: 1, maxAttempts: 25, createdAt: Date(),
                            uniqueKey: nil)
        return try await DailySyncHandler(settings: settings).run(
            job, context: JobContext(logger: Logger(component: "test"), pool: pipeline.database.pool, workerID: "test"))
            .outcome
    }

    private func addLivePurchases(_ pipeline: Pipeline, connection: StoreConnection, lineages: [String]) async throws {
        for lineage in lineages {
            try await pipeline.database.pool.query("""
                INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state,
                                             expires_at, snapshot, as_of)
                VALUES ($1, $2, $3, 'pro.monthly', 'active', now() + interval '20 days', '{}', now() - interval '1 day')
                """, [connection.id, lineage, connection.environment.rawValue])
        }
    }

    /// The fan-out failed part-way (a database error, a lost lease) and runs again the same day. The resyncs
    /// it enqueued that have finished hold no unique key any more, so only the day recorded with each
    /// connection's batch keeps their lineages from being resynced twice.
    @Test func aReRunOfTheDaysFanOutPlansOnlyTheConnectionsTheFirstRunDidNotReach() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let lineages = (0..<4).map { "30000000000000\($0)" }
            try await addLivePurchases(pipeline, connection: pipeline.connection, lineages: lineages)
            #expect(try await fanOut(pipeline, period: "2026-11-29") == "planned 4 resyncs")
            // The first two resyncs finish: a completed job's row, and its unique key, are deleted.
            try await pipeline.database.pool.query("""
                DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE kind = 'apple.resync' ORDER BY run_at LIMIT 2)
                """)
            // A connection the interrupted run had not reached yet.
            let other = try await pipeline.database.pool.transaction { db in
                try Catalog.addConnection(Catalog.NewConnection(accountID: pipeline.accountID, store: .apple,
                                                                appIdentifier: "com.example.other", environment: .sandbox),
                                          on: db)
            }
            try await addLivePurchases(pipeline, connection: other, lineages: ["400000000000000"])

            #expect(try await fanOut(pipeline, period: "2026-11-29") == "planned 1 resyncs")
            let pending: [String] = try await pipeline.database.pool.query(
                "SELECT payload->>'lineage' FROM jobs WHERE kind = 'apple.resync' ORDER BY payload->>'lineage'")
                .map { try $0.decode(0) }
            #expect(pending == [lineages[2], lineages[3], "400000000000000"])

            // The next day queues again the two lineages whose resync finished; the three still waiting keep
            // their one job and place instead of gaining a second.
            #expect(try await fanOut(pipeline, period: "2026-11-30") == "planned 2 resyncs")
            #expect(try await pipeline.count(
                "SELECT count(*) FROM jobs WHERE kind = 'apple.resync' AND unique_key LIKE 'resync:daily:%'") == 5)
            #expect(try await pipeline.count(
                "SELECT count(DISTINCT payload->>'lineage') FROM jobs WHERE kind = 'apple.resync'") == 5)
        }
    }

    @Test func aResyncAndANotificationAtTheSameMomentAgree() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            try pipeline.simulator.setLatency(.milliseconds(20))
            try await pipeline.database.pool.transaction { db in
                _ = try ResyncPlannerProbe.enqueue(pipeline, lineage: lineage, on: db)
            }
            try await pipeline.simulator.renew(lineage)
            try await pipeline.settle()
            #expect(try await pipeline.invoices(lineage).count == 2)
            #expect(try await pipeline.count("SELECT count(*) FROM payments") == 2)
            #expect(try await pipeline.subscription(lineage)?.state == "active")
        }
    }

    @Test func threeWorkerProcessesFanOutTheDayExactlyOnce() async throws {
        var options = Pipeline.Options()
        options.startWorker = false
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            // Purchases the mirror knows (as if mirrored before), whose store state the resync re-reads.
            for _ in 0..<4 {
                let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                     appAccountToken: customer.token, silent: true)
                    .originalTransactionId
                try await pipeline.database.pool.query("""
                    INSERT INTO store_purchases (connection_id, lineage, environment, store_product_id, store_state,
                                                 expires_at, snapshot, as_of)
                    VALUES ($1, $2, 'Production', 'pro.monthly', 'active', now() + interval '20 days', '{}', now() - interval '1 day')
                    """, [pipeline.connection.id, lineage])
            }
            let workers = try (0..<3).map { _ in
                try ChildProcess("storesync", ["work", "--concurrency", "4", "--poll-interval", "100ms",
                                               "--grace-period", "1s", "--metrics-listen", "off"],
                                 environment: ["DATABASE_URL": pipeline.database.url, "STORESYNC_LOG_LEVEL": "error"])
            }
            try await eventually("the daily fan-out and its resyncs to finish") {
                let runs = try await pipeline.count("SELECT count(*) FROM schedule_runs WHERE schedule = 'daily-sync'")
                let pending = try await pipeline.count("SELECT count(*) FROM jobs")
                let resynced = try await pipeline.count("SELECT count(*) FROM purchase_events WHERE source = 'resync'")
                return runs == 1 && pending == 0 && resynced >= 4
            }
            for worker in workers { worker.signal(SIGTERM) }
            for worker in workers { #expect(try await worker.wait() == 0) }
            #expect(try await pipeline.count("SELECT count(*) FROM schedule_runs WHERE schedule = 'daily-sync'") == 1)
            #expect(try await pipeline.count("""
                SELECT count(*) FROM purchase_events WHERE source = 'resync' AND kind IN ('refreshed', 'state_changed')
                """) == 4)
            #expect(try await pipeline.invoices(try await pipeline.database.pool.query(
                "SELECT lineage FROM store_purchases LIMIT 1")[0].decode(0)).count == 1)
        }
    }
}

/// The planner with the pipeline's connection and default settings.
enum ResyncPlannerProbe {
    static func enqueue(_ pipeline: Pipeline, lineage: String? = nil, on db: isolated PostgresConnection) throws -> Int {
        try ResyncPlanner.enqueue(connection: pipeline.connection, lineage: lineage, batch: "test", reason: "test",
                                  settings: ResyncSettings(), on: db)
    }
}
