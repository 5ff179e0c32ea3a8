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
        /// The account a notification's payload names (`account_id`), or the store connection a store job's names
        /// (`connection_id`): what on-call filters by.
        public let accountID: Int64?
        public let connectionID: Int64?
    }

    /// Which dead letters a listing (or a retry or discard of all it shows) takes; nil and empty fields take all.
    public struct Filter: Sendable, Equatable {
        public var kind: String?
        /// `apple` or `google` (nothing else): the kinds of that store.
        public var store: String?
        /// Dead letters of this account: notifications naming it, and store jobs of `connectionIDs` (its
        /// connections, which the caller reads from the account).
        public var accountID: Int64?
        public var connectionIDs: [Int64]
        /// Text the reason contains, in any case.
        public var reason: String?
        /// Dead letters that died at most this long ago.
        public var maxAge: Duration?
        /// Dead letters that died at or before this time: what a page showed, so that acting on "all it shows"
        /// never takes one that arrived after it was drawn.
        public var diedBy: Date?

        public init(kind: String? = nil, store: String? = nil, accountID: Int64? = nil, connectionIDs: [Int64] = [],
                    reason: String? = nil, maxAge: Duration? = nil, diedBy: Date? = nil) {
            self.kind = kind
            self.store = store
            self.accountID = accountID
            self.connectionIDs = connectionIDs
            self.reason = reason
            self.maxAge = maxAge
            self.diedBy = diedBy
        }

        /// The `WHERE` clause, its parameters from `$1` on.
        var condition: (sql: String, parameters: [any PostgresEncodable]) {
            let pattern = reason.map { "%" + $0.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%" }
            return ("""
                ($1::text IS NULL OR kind = $1) AND ($2::text IS NULL OR kind LIKE $2 || '.%')
                AND ($3::bigint IS NULL OR payload->>'account_id' = $3::text
                     OR payload->>'connection_id' = ANY($4::text[]))
                AND ($5::text IS NULL OR reason ILIKE $5)
                AND ($6::bigint IS NULL OR dead_at > now() - $6 * interval '1 millisecond')
                AND ($7::timestamptz IS NULL OR dead_at <= $7)
                """, [kind, store, accountID, PostgresArray(connectionIDs.map(String.init)), pattern, maxAge?.milliseconds,
                      diedBy])
        }
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

    /// The dead letters `filter` takes, newest first, `limit` of them after skipping `offset`.
    public func list(_ filter: Filter = Filter(), offset: Int = 0, limit: Int = 100) async throws -> [Entry] {
        let (condition, parameters) = filter.condition
        return try await pool.query("""
            SELECT \(Self.entryColumns) FROM dead_letters WHERE \(condition)
            ORDER BY dead_at DESC, id DESC OFFSET $8 LIMIT $9
            """, parameters + [offset, limit]).map(Self.entry)
    }

    /// How many dead letters `filter` takes, and when the newest of them died (nil when none).
    public func count(_ filter: Filter) async throws -> (count: Int, newest: Date?) {
        let (condition, parameters) = filter.condition
        let row = try await pool.query("SELECT count(*), max(dead_at) FROM dead_letters WHERE \(condition)", parameters)[0]
        return (try row.decode(0), try row.decodeOptional(1))
    }

    /// The kinds of the dead letters there are, for a filter's choices.
    public func kinds() async throws -> [String] {
        try await pool.query("SELECT DISTINCT kind FROM dead_letters ORDER BY 1").map { try $0.decode(0) }
    }

    public func count() async throws -> Int {
        try await pool.query("SELECT count(*) FROM dead_letters")[0].decode(0)
    }

    public func show(id: Int64) async throws -> Detail? {
        try await pool.run { connection in try Self.details(ids: [id], on: connection).first }
    }

    /// The dead letters `ids` names that exist, whole, by id: what a caller retrying or discarding them records
    /// about them first.
    public static func details(ids: [Int64], on connection: isolated PostgresConnection) throws -> [Detail] {
        try connection.query("""
            SELECT \(entryColumns), payload, raw, headers, priority, max_attempts, unique_key, errors
            FROM dead_letters WHERE id = ANY($1::bigint[]) ORDER BY id
            """, [PostgresArray(ids)]).map { row in
            Detail(entry: try Self.entry(row), payload: try row.decode(8), raw: try row.decodeOptional(9),
                   headers: try row.decodeOptional(10), priority: Int16(try row.decode(11, as: Int.self)),
                   maxAttempts: try row.decode(12), uniqueKey: try row.decodeOptional(13), errors: try row.decode(14))
        }
    }

    /// Puts dead letters back on the queue under their original ids, due now, with a fresh set of attempts;
    /// the error history is kept so the next failure still shows what happened before. An id given twice is
    /// retried once: its second turn would find it gone and report it as never there.
    public func retry(ids: [Int64]) async throws -> [Int64: RetryResult] {
        try await pool.transaction { connection in try Self.retry(ids: ids, on: connection) }
    }

    /// `retry` inside the caller's transaction, for a caller that records what it did in the same commit. Each dead
    /// letter goes back through `storesync_retry_dead_letter` (V0018), which a role may run without being able to
    /// insert jobs of its own.
    public static func retry(ids: [Int64], on connection: isolated PostgresConnection) throws -> [Int64: RetryResult] {
        var results: [Int64: RetryResult] = [:]
        for id in ids where results[id] == nil {
            let answer: String = try connection.query("SELECT storesync_retry_dead_letter($1)", [id])[0].decode(0)
            switch answer {
            case "requeued": results[id] = .requeued
            case "not_found": results[id] = .notFound
            case _ where answer.hasPrefix("kept:"): results[id] = .duplicateUniqueKey(String(answer.dropFirst("kept:".count)))
            default: throw PostgresError(.decoding, message: "storesync_retry_dead_letter answered \(answer.prefix(40).debugDescription)")
            }
        }
        try connection.query("SELECT pg_notify('storesync_jobs', 'dead-letters')")
        return results
    }

    /// Ids of all dead letters `filter` takes (at most `limit`), newest first as `list` shows them, for a retry or
    /// discard of them all.
    public func ids(_ filter: Filter = Filter(), limit: Int = .max) async throws -> [Int64] {
        let (condition, parameters) = filter.condition
        return try await pool.query("SELECT id FROM dead_letters WHERE \(condition) ORDER BY dead_at DESC, id DESC LIMIT $8",
                                    parameters + [limit]).map { try $0.decode(0) }
    }

    /// Deletes dead letters for good; returns the ids that existed.
    public func discard(ids: [Int64]) async throws -> [Int64] {
        try await pool.run { connection in try Self.discard(ids: ids, on: connection) }
    }

    /// `discard` on the caller's connection, inside its transaction if it has one.
    public static func discard(ids: [Int64], on connection: isolated PostgresConnection) throws -> [Int64] {
        try connection.query("DELETE FROM dead_letters WHERE id = ANY($1::bigint[]) RETURNING id", [PostgresArray(ids)])
            .map { try $0.decode(0) }
    }

    private static let entryColumns = """
        id, kind, attempts, reason, dead_at, job_created_at, (payload->>'account_id')::bigint,
        (payload->>'connection_id')::bigint
        """

    private static func entry(_ row: PostgresRow) throws -> Entry {
        Entry(id: try row.decode(0), kind: try row.decode(1), attempts: try row.decode(2), reason: try row.decode(3),
              deadAt: try row.decode(4), createdAt: try row.decode(5), accountID: try row.decodeOptional(6),
              connectionID: try row.decodeOptional(7))
    }
}
