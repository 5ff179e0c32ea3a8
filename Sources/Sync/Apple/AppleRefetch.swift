import Accounts
import AppStore
import Foundation
import Logging
import Mirror
import Postgres
import Queue
import StoreModel

/// Re-fetches a lineage's authoritative state from the App Store Server API — its subscription status and
/// its transaction history since the last revision read — and translates it into a snapshot.
struct AppleRefetch {
    struct Result: Sendable {
        /// Its `cursor` is the history revision to store with the purchase, so the next fetch is incremental.
        let snapshot: StoreSnapshot
        /// The history read stopped at the client's page cap with transactions still to come: the job hands
        /// the rest to a follow-up resync (`AppleFollowUp`).
        let hasMore: Bool
    }

    let client: AppStoreAPIClient
    let logger: Logger

    /// - Parameter vouched: the transaction came signed from Apple itself (a notification), so "transaction
    ///   not found" is Apple's eventual consistency and worth a few retries, not a permanent failure.
    /// - Parameter revision: the lineage's stored history revision (`Purchases.storedCursor`); the history is read
    ///   from there on.
    /// - Parameter previousError: the job's last error (`LeasedJob.lastError`), for `StoreFailures`.
    func snapshot(connection: StoreConnection, lineage: String, transactionID: String, revision: String?,
                  source: SnapshotSource, previousError: String?, vouched: Bool) async throws -> Result {
        do {
            return try await fetch(connection: connection, lineage: lineage, transactionID: transactionID,
                                   revision: revision, source: source)
        } catch let error as AppStoreAPIError {
            throw StoreFailures.api(error, previous: previousError, vouched: vouched)
        } catch let error as AppleSnapshotError {
            throw JobFailure.permanent("the App Store's answer cannot be mirrored: \(error)")
        }
    }

    /// The same read, failing with Apple's own `AppStoreAPIError` or `AppleSnapshotError`: for a caller that
    /// answers a person now (the API's purchase registration) rather than retrying a job. `statuses`, when the
    /// caller has read them already (to find the lineage), are not read again.
    func fetch(connection: StoreConnection, lineage: String, transactionID: String, revision: String?,
               source: SnapshotSource, statuses known: SubscriptionStatuses? = nil) async throws -> Result {
        let fetchedAt = Date()
        let statuses: SubscriptionStatuses
        let history: TransactionHistory
        if let known {
            statuses = known
            history = try await self.history(connectionID: connection.id, lineage: lineage, transactionID: transactionID,
                                             revision: revision)
        } else {
            // Independent reads, sent together: a notification waits one store round trip, not two. The
            // snapshot books the status's latest transaction too, so a renewal the history missed is not lost.
            async let pendingStatuses = client.subscriptionStatuses(transactionID: transactionID)
            async let pendingHistory = self.history(connectionID: connection.id, lineage: lineage,
                                                    transactionID: transactionID, revision: revision)
            (statuses, history) = try await (pendingStatuses, pendingHistory)
        }
        var snapshot = try AppleSnapshotTranslator.snapshot(lineage: lineage, statuses: statuses,
                                                            history: history.transactions, source: source,
                                                            fetchedAt: fetchedAt)
        snapshot.cursor = history.revision
        return Result(snapshot: snapshot, hasMore: history.hasMore)
    }

    /// The lineage's history from `revision` on. A stored revision Apple refuses (`4000005`) would refuse
    /// every later read of the lineage too, dead-lettering each of its notifications and resyncs; so the
    /// history is read once more from the start. That is safe because bookings are unique per store
    /// transaction: what was booked before is not booked again. Only when that read fails as well does its
    /// failure stand. Throws `AppStoreAPIError`.
    func history(connectionID: Int64, lineage: String, transactionID: String,
                 revision: String?) async throws -> TransactionHistory {
        do {
            return try await client.transactionHistory(transactionID: transactionID, revision: revision)
        } catch let error as AppStoreAPIError where error.code == .invalidRevision && revision?.isEmpty == false {
            // The revision itself stays out of the log: it is Apple's opaque token, of no use to on-call.
            logger.info("history revision reset: Apple refused the stored revision, reading the history from the start",
                        ["connection": .int(Int(connectionID)), "lineage": .string(lineage)])
            return try await client.transactionHistory(transactionID: transactionID, revision: nil)
        }
    }
}
