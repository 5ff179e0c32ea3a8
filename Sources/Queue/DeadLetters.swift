import Foundation
import Postgres

/// On-call's view of jobs that gave up: list, inspect, replay, discard.
public struct DeadLetters: Sendable {
    public struct Entry: Sendable {
        public let id: Int64
        public let kind: String
        public let attempts: Int
        public let reason: String
        public let deadAt: Date
        public let createdAt: Date
    }

    public struct Detail: Sendable {
        public let entry: Entry
        public let payload: String
        public let raw: Data?
        public let headers: String?
        public let priority: Int16
        public let maxAttempts: Int
        public let uniqueKey: String?
        /// JSON array: every attempt's `{attempt, at, worker, error}`.
        public let errors: String
    }

    /// What `retry` did with one dead letter.
    public enum RetryResult: Sendable, Equatable {
        case requeued
        case notFound
        /// A pending job already holds the same unique key; the dead letter is kept.
        case duplicateUniqueKey(String)
    }

    public let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    public func list(kind: String? = nil, limit: Int = 100) async throws -> [Entry] {
        try await pool.query("""
            SELECT id, kind, attempts, reason, dead_at, job_created_at FROM dead_letters
            WHERE $1::text IS NULL OR kind = $1 ORDER BY dead_at DESC, id DESC LIMIT $2
            """, [kind, limit]).map(Self.entry)
    }

    public func count() async throws -> Int {
        try await pool.query("SELECT count(*) FROM dead_letters")[0].decode(0)
    }

    public func show(id: Int64) async throws -> Detail? {
        try await pool.query("""
            SELECT id, kind, attempts, reason, dead_at, job_created_at, payload, raw, headers, priority, max_attempts,
                   unique_key, errors
            FROM dead_letters WHERE id = $1
            """, [id]).first.map { row in
            Detail(entry: try Self.entry(row), payload: try row.decode(6), raw: try row.decodeOptional(7),
                   headers: try row.decodeOptional(8), priority: Int16(try row.decode(9, as: Int.self)),
                   maxAttempts: try row.decode(10), uniqueKey: try row.decodeOptional(11), errors: try row.decode(12))
        }
    }

    /// Puts dead letters back on the queue under their original ids, due now, with a fresh set of attempts;
    /// the error history is kept so the next failure still shows what happened before. An id given twice is
    /// retried once: its second turn would find it gone and report it as never there.
    public func retry(ids: [Int64]) async throws -> [Int64: RetryResult] {
        try await pool.transaction { connection in
            var results: [Int64: RetryResult] = [:]
            for id in ids where results[id] == nil {
                // A pending job holding the same unique key wins, even one another session is enqueueing right now
                // (the insert waits for it, then skips): the dead letter is deleted only once its job is inserted.
                let requeued = try !connection.query("""
                    WITH dead AS (SELECT * FROM dead_letters WHERE id = $1 FOR UPDATE),
                    requeued AS (
                        INSERT INTO jobs (id, kind, payload, raw, headers, priority, max_attempts, unique_key, errors,
                                          last_error, created_at)
                        SELECT id, kind, payload, raw, headers, priority, max_attempts, unique_key,
                               errors || jsonb_build_object('at', now(), 'event', 'replayed from dead letters'),
                               reason, job_created_at
                        FROM dead
                        ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
                        RETURNING id)
                    DELETE FROM dead_letters d USING requeued WHERE d.id = requeued.id
                    RETURNING d.id
                    """, [id]).isEmpty
                if requeued {
                    results[id] = .requeued
                    continue
                }
                let kept = try connection.query("SELECT unique_key FROM dead_letters WHERE id = $1", [id])
                results[id] = kept.isEmpty ? .notFound : .duplicateUniqueKey(try kept[0].decodeOptional(0) ?? "")
            }
            try connection.query("SELECT pg_notify('storesync_jobs', 'dead-letters')")
            return results
        }
    }

    /// Ids of all dead letters (of one kind), for `retry --all`.
    public func ids(kind: String?) async throws -> [Int64] {
        try await pool.query("SELECT id FROM dead_letters WHERE $1::text IS NULL OR kind = $1 ORDER BY id", [kind])
            .map { try $0.decode(0) }
    }

    /// Deletes dead letters for good; returns the ids that existed.
    public func discard(ids: [Int64]) async throws -> [Int64] {
        try await pool.query("DELETE FROM dead_letters WHERE id = ANY($1::bigint[]) RETURNING id", [PostgresArray(ids)])
            .map { try $0.decode(0) }
    }

    private static func entry(_ row: PostgresRow) throws -> Entry {
        Entry(id: try row.decode(0), kind: try row.decode(1), attempts: try row.decode(2), reason: try row.decode(3),
              deadAt: try row.decode(4), createdAt: try row.decode(5))
    }
}
