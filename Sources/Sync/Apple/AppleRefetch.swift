import AppStore
import Foundation
import Mirror
import Postgres
import Queue
import StoreModel

/// Re-fetches a lineage's authoritative state from the App Store Server API — its subscription status and
/// its transaction history since the last revision read — and translates it into a snapshot.
struct AppleRefetch {
    struct Result: Sendable {
        let snapshot: StoreSnapshot
        /// The history revision to store with the purchase, so the next fetch is incremental.
        let revision: String?
    }

    let client: AppStoreAPIClient

    /// The history revision stored with a lineage's purchase, nil before its first fetch.
    static func storedRevision(connectionID: Int64, lineage: String) -> PostgresQuery<String?> {
        PostgresQuery("SELECT history_revision FROM store_purchases WHERE connection_id = $1 AND lineage = $2",
                      [connectionID, lineage]) { try $0.first?.decodeOptional(0, as: String.self) }
    }

    /// - Parameter vouched: the transaction came signed from Apple itself (a notification), so "transaction
    ///   not found" is Apple's eventual consistency and worth a few retries, not a permanent failure.
    /// - Parameter revision: the lineage's stored history revision (`storedRevision`); the history is read
    ///   from there on.
    func snapshot(connection: StoreConnection, lineage: String, transactionID: String, revision: String?,
                  source: SnapshotSource, attempt: Int, vouched: Bool) async throws -> Result {
        do {
            let fetchedAt = Date()
            // Independent reads, sent together: a notification waits one store round trip, not two. The
            // snapshot books the status's latest transaction too, so a renewal the history missed is not lost.
            async let pendingStatuses = client.subscriptionStatuses(transactionID: transactionID)
            async let pendingHistory = client.transactionHistory(transactionID: transactionID, revision: revision)
            let (statuses, history) = try await (pendingStatuses, pendingHistory)
            let snapshot = try AppleSnapshotTranslator.snapshot(lineage: lineage, statuses: statuses,
                                                                history: history.transactions, source: source,
                                                                fetchedAt: fetchedAt)
            return Result(snapshot: snapshot, revision: history.revision ?? revision)
        } catch let error as AppStoreAPIError {
            throw StoreFailures.api(error, attempt: attempt, vouched: vouched)
        } catch let error as AppleSnapshotError {
            throw JobFailure.permanent("the App Store's answer cannot be mirrored: \(error)")
        }
    }
}
