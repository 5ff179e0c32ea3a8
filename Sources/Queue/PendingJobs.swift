import Foundation
import Postgres

extension JobQueue {
    /// When the latest job never tried yet whose unique key starts with `uniqueKeyPrefix` is due, if that is
    /// still ahead: how far a planner's backlog reaches. A job waiting out a retry's backoff does not count. The
    /// lease index serves it (one priority, read from the latest due backwards).
    public static func lastUntriedDue(priority: Int16, uniqueKeyPrefix: String,
                                      on db: isolated PostgresConnection) throws -> Date? {
        try db.query("""
            SELECT run_at FROM jobs
            WHERE priority = $1 AND run_at > now() AND attempt = 0 AND unique_key LIKE $2
            ORDER BY run_at DESC LIMIT 1
            """, [Int(priority), likePrefix(uniqueKeyPrefix)]).first?.decode(0)
    }

    /// A LIKE pattern matching what starts with `prefix`, its own `%`, `_` and backslash taken literally.
    static func likePrefix(_ prefix: String) -> String {
        prefix.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    /// The database's clock, the one run_at and leases are compared with.
    public static func now(on db: isolated PostgresConnection) throws -> Date {
        try db.query("SELECT now()")[0].decode(0)
    }
}
