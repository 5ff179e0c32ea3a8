import Foundation
import Postgres

/// The per-lineage lock that serialises applies of one purchase lineage. Applies run inside group-commit
/// transactions that carry several jobs, so a blocking lock could make two such transactions wait on each
/// other (a deadlock PostgreSQL breaks only after its deadlock timeout, stalling every job in both). The lock
/// is therefore only ever tried, for a bounded moment, and a lineage still busy after that is reported as
/// `lineageBusy`, which the job retries shortly.
enum LineageLock {
    static let attempts = 25
    static let pause: TimeInterval = 0.02

    static func acquire(_ key: String, on db: isolated PostgresConnection) throws {
        for attempt in 0..<attempts {
            let locked: Bool = try db.query("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", [key])[0].decode(0)
            if locked { return }
            // The connection's own thread, not Swift's pool: a short sleep here blocks nothing else.
            if attempt + 1 < attempts { Thread.sleep(forTimeInterval: pause) }
        }
        throw MirrorError(.lineageBusy, "\(key) is being applied by another transaction")
    }
}
