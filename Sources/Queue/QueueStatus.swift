import Foundation
import Postgres

/// A snapshot of the queue for `storesync status` and the metrics sampler.
public struct QueueStatus: Sendable {
    public struct Depth: Sendable, Equatable {
        public let kind: String
        /// `available` (due now), `scheduled` (due later, including retries), `leased`.
        public let state: String
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

    public static func read(pool: PostgresPool) async throws -> QueueStatus {
        try await pool.transaction { connection in
            let depths = try connection.query("""
                SELECT kind,
                       CASE WHEN lease_deadline > now() THEN 'leased'
                            WHEN run_at <= now() THEN 'available'
                            ELSE 'scheduled' END AS state,
                       count(*)
                FROM jobs GROUP BY 1, 2 ORDER BY 1, 2
                """).map { Depth(kind: try $0.decode(0), state: try $0.decode(1), count: try $0.decode(2)) }
            let oldest = try connection.query("""
                SELECT coalesce(extract(epoch FROM now() - min(run_at)), 0)::float8 FROM jobs
                WHERE run_at <= now() AND (lease_deadline IS NULL OR lease_deadline <= now())
                """)[0].decode(0, as: Double.self)
            let leases = try connection.query("""
                SELECT lease_owner, count(*), min(leased_at) FROM jobs
                WHERE lease_deadline > now() GROUP BY 1 ORDER BY 1
                """).map { Lease(worker: try $0.decode(0), count: try $0.decode(1), oldestLeasedAt: try $0.decode(2)) }
            let dead = try connection.query("SELECT count(*) FROM dead_letters")[0].decode(0, as: Int.self)
            return QueueStatus(depths: depths, oldestAvailableAgeSeconds: oldest, leases: leases, deadLetters: dead)
        }
    }
}
