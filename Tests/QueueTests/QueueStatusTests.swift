import Foundation
import Postgres
@testable import Queue
import TestSupport
import Testing

/// The queue's snapshot: exact for what is due (available, leased, their ages and owners) at any size, and for
/// what is scheduled while the table is small; scaled from a sample of pages beyond that.
@Suite struct QueueStatusTests {
    /// Jobs of two kinds at three priorities: due, scheduled, retrying, and leased by two workers.
    static func seed(_ pool: PostgresPool) async throws {
        try await pool.query("""
            INSERT INTO jobs (kind, priority, run_at, lease_owner, leased_at, lease_deadline) VALUES
                ('apple.notification', 10, now() - interval '30 seconds', NULL, NULL, NULL),
                ('apple.notification', 10, now() - interval '5 seconds', NULL, NULL, NULL),
                ('apple.notification', 0, now() - interval '2 minutes', 'worker-a', now() - interval '1 minute', now() + interval '1 minute'),
                ('apple.notification', 0, now() - interval '1 minute', 'worker-b', now() - interval '10 seconds', now() + interval '1 minute'),
                ('apple.notification', 0, now() - interval '1 minute', 'worker-b', now() - interval '20 seconds', now() + interval '1 minute'),
                ('apple.resync', -5, now() + interval '1 hour', NULL, NULL, NULL),
                ('apple.resync', -5, now() + interval '2 hours', NULL, NULL, NULL),
                ('apple.resync', -5, now() - interval '10 minutes', NULL, NULL, NULL),
                ('google.notification', 0, now() + interval '30 seconds', NULL, NULL, NULL),
                ('google.notification', 0, now() - interval '1 second', 'worker-a', now() - interval '3 minutes', now() - interval '1 second')
            """)
    }

    /// The snapshot as one full scan of the table tells it: what the cheap reads must agree with.
    static func fullScan(_ pool: PostgresPool) async throws -> [QueueStatus.Depth] {
        try await pool.query("""
            SELECT kind, CASE WHEN lease_deadline > now() THEN 'leased' WHEN run_at <= now() THEN 'available'
                              ELSE 'scheduled' END, count(*)
            FROM jobs GROUP BY 1, 2 ORDER BY 1, 2
            """).map { QueueStatus.Depth(kind: try $0.decode(0), state: try $0.decode(1), count: try $0.decode(2)) }
    }

    @Test func aSmallQueueIsCountedExactly() async throws {
        try await TestDatabase.with { database in
            try await Self.seed(database.pool)
            let status = try await QueueStatus.read(pool: database.pool)
            #expect(!status.scheduledEstimated)
            #expect(status.depths == (try await Self.fullScan(database.pool)))
            #expect(status.depths.contains(QueueStatus.Depth(kind: "apple.notification", state: "leased", count: 3)))
            #expect(status.depths.contains(QueueStatus.Depth(kind: "google.notification", state: "available", count: 1)),
                    "a lease past its deadline is available again")
            #expect(status.leases.map(\.worker) == ["worker-a", "worker-b"])
            #expect(status.leases.map(\.count) == [1, 2])
            #expect((590...700).contains(status.oldestAvailableAgeSeconds), "the resync due 10 minutes ago")
            #expect(status.deadLetters == 0)
        }
    }

    /// The next day's scheduled jobs by kind and hour: how the daily resync's spread lies (the console's chart, the
    /// `storesync_scheduled_jobs_due` gauge); a job due later than a day counts only in its kind's depth.
    @Test func theNextDaysScheduledJobsAreCountedByHour() async throws {
        try await TestDatabase.with { database in
            try await Self.seed(database.pool)
            try await database.pool.query("INSERT INTO jobs (kind, priority, run_at) VALUES ('apple.resync', -5, now() + interval '2 days')")
            let status = try await QueueStatus.read(pool: database.pool)
            let expected = try await database.pool.query("""
                SELECT kind, date_trunc('hour', run_at), count(*) FROM jobs
                WHERE run_at > now() AND run_at <= now() + interval '24 hours' GROUP BY 1, 2 ORDER BY 2, 1
                """).map { QueueStatus.Due(kind: try $0.decode(0), hour: try $0.decode(1), count: try $0.decode(2)) }
            #expect(status.scheduledByHour == expected)
            #expect(status.scheduledByHour.filter { $0.kind == "apple.resync" }.reduce(0) { $0 + $1.count } == 2)
            #expect(status.depths.contains(QueueStatus.Depth(kind: "apple.resync", state: "scheduled", count: 3)))
        }
    }

    /// Past the exact size the scheduled jobs come from a sample of pages, scaled; what is due stays exact. With
    /// every page sampled (a table this small) the scaled counts are the exact ones, which checks the scaling.
    @Test func aLargeQueueEstimatesOnlyWhatIsScheduled() async throws {
        try await TestDatabase.with { database in
            try await Self.seed(database.pool)
            let status = try await QueueStatus.read(pool: database.pool, exactPages: 0)
            #expect(status.scheduledEstimated)
            #expect(status.depths == (try await Self.fullScan(database.pool)))
        }
    }

    @Test func anEmptyQueueHasNothingWaiting() async throws {
        try await TestDatabase.with { database in
            let status = try await QueueStatus.read(pool: database.pool)
            #expect(status.depths.isEmpty && status.leases.isEmpty && status.oldestAvailableAgeSeconds == 0)
        }
    }
}
