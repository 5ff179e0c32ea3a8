import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// Several real worker processes against one database: exactly-once completion, crash recovery through
/// lease expiry, and one schedule run per period.
@Suite struct MultiProcessTests {
    private func count(_ database: TestDatabase, _ sql: String) async throws -> Int {
        try await database.pool.query(sql)[0].decode(0)
    }

    private func startWorkers(_ count: Int, _ database: TestDatabase, _ arguments: [String]) throws -> [ChildProcess] {
        try (0..<count).map { _ in
            try ChildProcess("storesync-testworker", arguments,
                             environment: ["DATABASE_URL": database.url, "STORESYNC_LOG_LEVEL": "warning"])
        }
    }

    private func stop(_ workers: [ChildProcess]) async throws {
        workers.forEach { $0.signal(SIGTERM) }
        for worker in workers {
            let status = try await worker.wait()
            #expect(status == 0, "worker exited with \(status): \(worker.stderr.suffix(2000))")
        }
    }

    @Test func threeProcessesWithEightSlotsProcessTenThousandJobsExactlyOnce() async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            try await database.pool.query(
                "INSERT INTO jobs (kind) SELECT $1 FROM generate_series(1, 10000)", [TestHandlers.record])
            let workers = try startWorkers(3, database, ["--concurrency", "8"])
            try await eventually("all 10 000 jobs to complete", timeout: .seconds(180), every: .milliseconds(200)) {
                try await count(database, "SELECT count(*) FROM jobs") == 0
            }
            try await stop(workers)
            #expect(try await count(database, "SELECT count(*) FROM test_effects") == 10_000)
            #expect(try await count(database, "SELECT count(DISTINCT job_id) FROM test_effects") == 10_000)
            #expect(try await count(database, "SELECT count(*) FROM test_effects WHERE attempt <> 1") == 0)
            #expect(try await count(database, "SELECT count(DISTINCT worker) FROM test_effects") == 3)
            #expect(try await count(database, "SELECT count(*) FROM dead_letters") == 0)
        }
    }

    @Test func aJobOfAKilledWorkerCompletesOnceAfterItsLeaseExpires() async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            // Attempt 1 runs for an hour; the retry after the crash is quick.
            let id = try #require(try await JobQueue(pool: database.pool).enqueue(NewJob(
                kind: TestHandlers.record, payload: "{\"sleep_ms\": 3600000, \"sleep_on_attempt\": 1}")))
            let doomed = try startWorkers(1, database, ["--lease-ms", "1500"])
            try await eventually("the job to be leased by the first worker") {
                try await count(database, "SELECT count(*) FROM jobs WHERE lease_owner IS NOT NULL") == 1
            }
            doomed[0].signal(SIGKILL)
            _ = try await doomed[0].wait()
            let survivor = try startWorkers(1, database, ["--lease-ms", "1500", "--poll-ms", "100"])
            try await eventually("the job to complete after the lease expired", timeout: .seconds(60)) {
                try await count(database, "SELECT count(*) FROM jobs") == 0
            }
            try await stop(survivor)
            let effects = try await database.pool.query("SELECT job_id, attempt FROM test_effects")
            #expect(effects.count == 1)
            #expect(try effects[0].decode(0, as: Int64.self) == id)
            #expect(try effects[0].decode(1, as: Int.self) == 2)
        }
    }

    @Test func threeProcessesRacingAScheduleProduceOneRunPerPeriod() async throws {
        try await TestDatabase.with { database in
            try await TestHandlers.createEffectsTable(database.pool)
            let workers = try startWorkers(3, database, ["--daily-schedule", "test-daily"])
            try await eventually("the schedule's job to run") {
                try await count(database, "SELECT count(*) FROM test_effects") >= 1
            }
            try await eventually("every worker to have tried to claim the period") {
                // Each process claims at start-up; by the time all three are connected, all three have tried.
                try await count(database, """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND application_name = 'storesync-listener'
                    """) == 3
            }
            try await stop(workers)
            #expect(try await count(database, "SELECT count(*) FROM schedule_runs WHERE schedule = 'test-daily'") == 1)
            #expect(try await count(database, "SELECT count(*) FROM test_effects") == 1)
        }
    }
}
