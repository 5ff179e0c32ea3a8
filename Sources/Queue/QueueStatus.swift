import Foundation
import Postgres

/// A snapshot of the queue for `storesync status` and the metrics sampler, cheap at any size: every worker
/// samples it every 15 s, and a daily resync can queue a million jobs. What is due now — available and leased
/// jobs, their ages, the leases by worker — is counted exactly from the lease index, which holds few due rows
/// in a healthy queue; the jobs scheduled for later are counted exactly while the table is small, and estimated
/// from a sample of its pages once it is large (`scheduledEstimated`).
public struct QueueStatus: Sendable {
    public struct Depth: Sendable, Equatable {
        public let kind: String
        /// `available` (due now), `scheduled` (due later, including retries), `leased`.
        public let state: String
        public let count: Int
    }

    /// Jobs of one kind due within one hour of the next day: how a spread (the daily resync's) lies over it.
    public struct Due: Sendable, Equatable {
        public let kind: String
        /// The hour's start.
        public let hour: Date
        public let count: Int
    }

    public struct Lease: Sendable, Equatable {
        public let worker: String
        public let count: Int
        public let oldestLeasedAt: Date
    }

    public let depths: [Depth]
    /// Seconds the oldest due, unleased job has been waiting; 0 when none is waiting.
    public let oldestAvailableAgeSeconds: Double
    public let leases: [Lease]
    public let deadLetters: Int
    /// The `scheduled` depths are estimates (the table was larger than `exactPages`).
    public let scheduledEstimated: Bool
    /// The scheduled jobs due within the next 24 hours, by kind and hour (estimates as `scheduledEstimated` says).
    public let scheduledByHour: [Due]

    /// Up to this many pages (about 100,000 jobs) the scheduled jobs are counted; beyond, `samplePages` of them
    /// are read and the counts scaled.
    public static let exactPages = 2_000
    static let samplePages = 500

    public static func read(pool: PostgresPool, exactPages: Int = QueueStatus.exactPages) async throws -> QueueStatus {
        try await pool.transaction { db in
            let pages: Int = try db.query("SELECT (pg_relation_size('jobs') / current_setting('block_size')::int)::int")[0]
                .decode(0)
            // The sampled share of pages in hundredths of a percent (the parameter is an integer).
            let sample = pages > exactPages ? max(1, min(10_000, 10_000 * samplePages / pages)) : nil
            // The lease index leads with priority: its few values are found by skipping through it, and the due
            // jobs are then a range scan for each.
            let due = try db.query("""
                WITH RECURSIVE p AS (
                    (SELECT priority FROM jobs ORDER BY priority DESC LIMIT 1)
                    UNION ALL
                    SELECT (SELECT j.priority FROM jobs j WHERE j.priority < p.priority ORDER BY j.priority DESC LIMIT 1)
                    FROM p WHERE p.priority IS NOT NULL
                )
                SELECT kind, coalesce(lease_deadline > now(), false), coalesce(lease_owner, ''), count(*),
                       min(run_at), min(leased_at)
                FROM jobs WHERE priority = ANY(ARRAY(SELECT priority FROM p WHERE priority IS NOT NULL)) AND run_at <= now()
                GROUP BY 1, 2, 3
                """)
            let scheduled = try db.query("""
                SELECT kind, CASE WHEN run_at <= now() + interval '24 hours' THEN date_trunc('hour', run_at) END, count(*)
                FROM jobs \(sample == nil ? "" : "TABLESAMPLE SYSTEM ($1::int / 100.0)")
                WHERE run_at > now() GROUP BY 1, 2
                """, sample.map { [$0] } ?? [])
            let now: Date = try db.query("SELECT now()")[0].decode(0)
            let dead = try db.query("SELECT count(*) FROM dead_letters")[0].decode(0, as: Int.self)

            var counts: [String: [String: Int]] = [:]
            var oldestAvailable: Date?
            var leases: [String: (count: Int, oldest: Date)] = [:]
            for row in due {
                let kind: String = try row.decode(0)
                let leased: Bool = try row.decode(1)
                let count: Int = try row.decode(3)
                counts[kind, default: [:]][leased ? "leased" : "available", default: 0] += count
                if leased {
                    let owner: String = try row.decode(2)
                    let leasedAt: Date = try row.decode(5)
                    let held = leases[owner]
                    leases[owner] = ((held?.count ?? 0) + count, min(held?.oldest ?? leasedAt, leasedAt))
                } else {
                    let runAt: Date = try row.decode(4)
                    oldestAvailable = min(oldestAvailable ?? runAt, runAt)
                }
            }
            var byHour: [Due] = []
            for row in scheduled {
                let kind: String = try row.decode(0)
                let sampled: Int = try row.decode(2)
                let count = sample.map { Int((Double(sampled) * 10_000 / Double($0)).rounded()) } ?? sampled
                counts[kind, default: [:]]["scheduled", default: 0] += count
                if let hour: Date = try row.decodeOptional(1) { byHour.append(Due(kind: kind, hour: hour, count: count)) }
            }
            let depths = counts.sorted { $0.key < $1.key }.flatMap { kind, states in
                states.sorted { $0.key < $1.key }.map { Depth(kind: kind, state: $0.key, count: $0.value) }
            }
            return QueueStatus(
                depths: depths, oldestAvailableAgeSeconds: oldestAvailable.map { max(0, now.timeIntervalSince($0)) } ?? 0,
                leases: leases.sorted { $0.key < $1.key }.map { Lease(worker: $0.key, count: $0.value.count,
                                                                       oldestLeasedAt: $0.value.oldest) },
                deadLetters: dead, scheduledEstimated: sample != nil,
                scheduledByHour: byHour.sorted { ($0.hour, $0.kind) < ($1.hour, $1.kind) })
        }
    }
}
