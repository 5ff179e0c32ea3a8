import Accounts
import Foundation
import Mirror
import Queue
import StoreModel
import Worker

/// The `apple.resync` job: the same re-fetch → snapshot → apply path as a notification, for one lineage,
/// recording drift when the store knew something the mirror did not.
struct AppleResyncHandler: JobHandler {
    let clients: AppleStoreClients
    let metrics: SyncMetrics?

    func run(_ task: ResyncArgs<AppleJobs>, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let connection = try await context.pool.run { db in try StoreConnections.get(id: task.connectionID, on: db) }
        guard let connection else { throw JobFailure.permanent("store connection \(task.connectionID) no longer exists") }
        let tools = try await clients.tools(for: connection, pool: context.pool)
        let source = SnapshotSource(kind: "resync", reference: task.reason, event: "RESYNC")
        // Any transaction id of the customer works for both endpoints; the original one always exists.
        let revision = try await context.pool.query(Purchases.storedCursor(connectionID: connection.id,
                                                                                 lineage: task.lineage))
        let fetched = try await AppleRefetch(client: tools.client, logger: context.logger)
            .snapshot(connection: connection, lineage: task.lineage, transactionID: task.lineage, revision: revision,
                      source: source, previousError: job.lastError, vouched: false)
        let followUp = AppleFollowUp.isFollowUp(reason: task.reason)
        let metrics = metrics
        return .done("resynced", writes: { db in
            try StoreFailures.mirroring {
                let outcome = try Mirror.apply(fetched.snapshot, connection: connection, on: db)
                if !followUp { try Drift.record(outcome, connectionID: connection.id, metrics: metrics, on: db) }
                try AppleFollowUp.follow(fetched, outcome: outcome, connection: connection, logger: context.logger, on: db)
            }
        }, serialKey: Mirror.lockKey(connectionID: connection.id, lineage: fetched.snapshot.lineage))
    }
}
