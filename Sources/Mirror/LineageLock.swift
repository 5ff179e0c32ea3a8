import Foundation
import Postgres

/// The per-lineage lock that serialises applies of one purchase lineage. Applies run inside group-commit
/// transactions that carry several jobs, so a blocking lock could make two such transactions wait on each
/// other (a deadlock PostgreSQL breaks only after its deadlock timeout, stalling every job in both). The lock
/// is therefore only ever tried, for a bounded moment, and a lineage still busy after that is reported as
/// `lineageBusy`, which the job retries shortly. Within a process, one flusher commits all of a lineage's
/// applies; between processes, group commits take lineages in key order (`JobQueue.finish`), so the
/// holder is never waiting for this transaction and the moment is normally enough.
enum LineageLock {
    static let attempts = 25
    static let pause: TimeInterval = 0.02

    /// The lock and `read`, to send ahead of the apply that will ask for them (`PostgresReadAhead`), keyed by
    /// the lock's key.
    static func readAhead(_ key: String, thenRead read: PostgresStatement) -> PostgresReadAhead {
        PostgresReadAhead(key: key, statements: [statement(key), read])
    }

    /// Takes the lock, then runs `read` under it, in one round trip; returns the read's rows. The read is a
    /// statement of its own, so in READ COMMITTED it sees everything committed before the lock was granted.
    /// When the two were sent ahead in this transaction and the lock was granted, their answers are used and
    /// nothing is sent.
    static func acquire(_ key: String, thenRead read: PostgresStatement, on db: isolated PostgresConnection) throws
        -> PostgresRows
    {
        let lock = statement(key)
        if let answers = db.takeAnswers(to: [lock, read], key: key), try answers[0][0].decode(0, as: Bool.self) {
            return answers[1]
        }
        for attempt in 0..<attempts {
            let results = try db.query([lock, read])
            if try results[0][0].decode(0, as: Bool.self) { return results[1] }
            // The connection's own thread, not Swift's pool: a short sleep here blocks nothing else.
            if attempt + 1 < attempts { Thread.sleep(forTimeInterval: pause) }
        }
        throw MirrorError(.lineageBusy, "\(key) is being applied by another transaction")
    }

    private static func statement(_ key: String) -> PostgresStatement {
        PostgresStatement("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", [key])
    }
}
