import Logging
import Mirror
import Postgres
import Queue

/// A history read that stopped at the client's page cap (`AppStoreAPIConfiguration.maxHistoryPages`) left
/// transactions unbooked. Rather than leave them to the lineage's next event or the daily resync, the job
/// that read it enqueues an `apple.resync` of the lineage with its own writes; that resync reads on from the
/// revision those writes store, and continues the same way while Apple still has more.
enum AppleHistoryContinuation {
    /// The follow-up resync's `reason`, which is also how the resync knows it is one.
    static let reason = "history continues"
    /// Names the follow-ups in their unique key (`resync:history:<connection>:<md5(lineage)>`, in
    /// `ResyncPlanner`'s scheme), so at most one is pending per lineage however many jobs find more history.
    static let batch = "history"

    /// After `Mirror.apply` of `fetched` in `job`'s completion: enqueues the follow-up when the read stopped
    /// short. An answer the mirror found stale stored no revision, so its follow-up would only read the same
    /// pages again; the rest then waits for the lineage's next read, as before.
    static func follow(_ fetched: AppleRefetch.Result, outcome: Mirror.Outcome, connection: StoreConnection,
                       job: LeasedJob, logger: Logger, on db: isolated PostgresConnection) throws {
        guard fetched.hasMore, outcome.applied else { return }
        let lineage = fetched.snapshot.lineage
        let added = try enqueue(connection: connection, lineage: lineage, job: job, on: db)
        logger.info(added ? "history continues in a follow-up resync" : "history continues in the pending follow-up resync",
                    ["connection": .int(Int(connection.id)), "lineage": .string(lineage)])
    }

    /// Enqueues the follow-up resync of `lineage` unless one is pending already; true when it was added. Runs
    /// in `job`'s completion, after `Mirror.apply` stored the revision the follow-up starts from.
    ///
    /// A follow-up that itself finds more would conflict with its own unique key, which it holds until its
    /// completion deletes it. So it gives the key up first, in that same transaction (its row is locked
    /// there, and gone when it commits): the key then passes from one follow-up to the next, and a follow-up
    /// that has run can never stand in for the one that is needed.
    static func enqueue(connection: StoreConnection, lineage: String, job: LeasedJob,
                        on db: isolated PostgresConnection) throws -> Bool {
        if job.kind == ResyncPlanner.jobKind(for: connection.store), let key = job.uniqueKey,
           key.hasPrefix("resync:\(batch):") {
            _ = try db.query("UPDATE jobs SET unique_key = NULL WHERE id = $1 AND attempt = $2 AND unique_key = $3",
                             [job.id, job.attempt, key])
        }
        return try ResyncPlanner.enqueue(connection: connection, lineage: lineage, batch: batch, reason: reason,
                                         settings: ResyncSettings(), on: db) > 0
    }
}
