import Crypto
import Foundation
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

    /// After `Mirror.apply` of `fetched` in a job's completion: enqueues the follow-up when the read stopped
    /// short. An answer the mirror found stale stored no revision, so its follow-up would only read the same
    /// pages again; the rest then waits for the lineage's next read, as before.
    static func follow(_ fetched: AppleRefetch.Result, outcome: Mirror.Outcome, connection: StoreConnection,
                       logger: Logger, on db: isolated PostgresConnection) throws {
        guard fetched.hasMore, outcome.applied, let revision = fetched.revision else { return }
        let lineage = fetched.snapshot.lineage
        let added = try enqueue(connection: connection, lineage: lineage, from: revision, on: db)
        logger.info(added ? "history continues in a follow-up resync" : "history continues in the pending follow-up resync",
                    ["connection": .int(Int(connection.id)), "lineage": .string(lineage)])
    }

    /// Enqueues the follow-up resync of `lineage` that reads on from `revision`, unless one is pending already;
    /// true when it was added. Runs in a job's completion, after `Mirror.apply` stored that revision.
    ///
    /// The unique key names the revision (`resync:history-<digest>:<connection>:<md5(lineage)>`, in
    /// `ResyncPlanner`'s scheme): jobs that stopped at the same point share one follow-up, and a follow-up that
    /// itself finds more — still holding its own key until its completion commits — queues the next one under
    /// the next revision's key instead of colliding with its own.
    static func enqueue(connection: StoreConnection, lineage: String, from revision: String,
                        on db: isolated PostgresConnection) throws -> Bool {
        let digest = Hex.encode(Digest.sha256(Data(revision.utf8)).prefix(12))
        return try ResyncPlanner.enqueue(connection: connection, lineage: lineage, batch: "history-\(digest)", reason: reason,
                                         settings: ResyncSettings(), on: db) > 0
    }
}
