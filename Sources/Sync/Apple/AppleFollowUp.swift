import Accounts
import Crypto
import Foundation
import Logging
import Mirror
import Postgres
import Queue

/// Some answers leave work only another read of the lineage can finish. The job that got one enqueues an
/// `apple.resync` of the lineage with its own writes (so only for what it committed):
/// - a history read that stopped at the client's page cap (`AppStoreAPIConfiguration.maxHistoryPages`) left
///   transactions unbooked; the resync reads on from the revision those writes store, and continues the same
///   way while Apple still has more;
/// - a stale answer showed refunds the mirror did not book (`Mirror.Outcome.staleRefunds`); the resync's fresh
///   read books them if Apple still shows them.
enum AppleFollowUp {
    /// The `reason` of a resync that reads on where a capped history read stopped.
    static let historyReason = "history continues"
    /// The `reason` of a resync that checks refunds only a stale answer showed.
    static let refundCheckReason = "refund check"
    /// Follow-ups finish what an earlier read of the lineage had no room for or could not order, not what a
    /// notification missed: their findings are no drift.
    static func isFollowUp(reason: String?) -> Bool { reason == historyReason || reason == refundCheckReason }

    /// After `Mirror.apply` of `fetched` in a job's completion: enqueues the follow-ups the answer needs. A stale
    /// answer stored no revision, so a history follow-up would only read the same pages again; the rest then
    /// waits for the lineage's next read, as before.
    static func follow(_ fetched: AppleRefetch.Result, outcome: Mirror.Outcome, connection: StoreConnection,
                       logger: Logger, on db: isolated PostgresConnection) throws {
        let lineage = fetched.snapshot.lineage
        if fetched.hasMore, outcome.applied, let revision = fetched.snapshot.cursor {
            let added = try enqueueHistory(connection: connection, lineage: lineage, from: revision, on: db)
            logger.info(added ? "history continues in a follow-up resync" : "history continues in the pending follow-up resync",
                        ["connection": .int(Int(connection.id)), "lineage": .string(lineage)])
        }
        if outcome.staleRefunds > 0 {
            // Keyed by the stale answer's time: a refund check whose own answer is stale (still holding its key
            // until its completion commits) queues the next one instead of colliding with itself.
            let asOf = Int64(fetched.snapshot.asOf.timeIntervalSince1970 * 1000)
            let added = try ResyncPlanner.enqueue(connection: connection, lineage: lineage, batch: "refund-check-\(asOf)",
                                                  reason: refundCheckReason, settings: ResyncSettings(), on: db) > 0
            logger.info(added ? "a stale answer showed refunds; a fresh read checks them"
                              : "a stale answer showed refunds; the pending refund check reads them",
                        ["connection": .int(Int(connection.id)), "lineage": .string(lineage)])
        }
    }

    /// Enqueues the follow-up resync of `lineage` that reads on from `revision`, unless one is pending already;
    /// true when it was added. Runs in a job's completion, after `Mirror.apply` stored that revision.
    ///
    /// The unique key names the revision (`resync:history-<digest>:<connection>:<md5(lineage)>`, in
    /// `ResyncPlanner`'s scheme): jobs that stopped at the same point share one follow-up, and a follow-up that
    /// itself finds more — still holding its own key until its completion commits — queues the next one under
    /// the next revision's key instead of colliding with its own.
    static func enqueueHistory(connection: StoreConnection, lineage: String, from revision: String,
                               on db: isolated PostgresConnection) throws -> Bool {
        let digest = Hex.encode(Digest.sha256(Data(revision.utf8)).prefix(12))
        return try ResyncPlanner.enqueue(connection: connection, lineage: lineage, batch: "history-\(digest)",
                                         reason: historyReason, settings: ResyncSettings(), on: db) > 0
    }
}
