import Accounts
import Foundation
import GooglePlay
import Mirror
import Postgres
import Queue
import StoreModel
import Worker

/// The `google.resync` job: the notification path (re-fetch → snapshot → apply) for a lineage's current
/// purchase token, recording drift; the voided-purchases sweep adds the charges Google voided so their
/// refunds are booked even when their orders are no longer the latest, or their token is one Google forgot.
struct GoogleResyncHandler: JobHandler {
    let clients: GoogleStoreClients
    let metrics: SyncMetrics?

    func run(_ task: ResyncArgs<GoogleJobs>, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let (connection, mirrored) = try await context.pool.transaction { db in
            (try StoreConnections.get(id: task.connectionID, on: db),
             try PurchaseTokens.current(connectionID: task.connectionID, lineage: task.lineage, on: db))
        }
        let token = mirrored?.token
        guard let connection else { throw JobFailure.permanent("store connection \(task.connectionID) no longer exists") }
        let tools = try await clients.tools(for: connection, pool: context.pool)
        let voided = (task.voided ?? []).map(\.order)
        let source = SnapshotSource(kind: "resync", reference: task.reason, event: voided.isEmpty ? "RESYNC" : "VOIDED_SWEEP")
        let answer = try await GoogleRefetch(tools: tools, pool: context.pool, previousError: job.lastError, logger: context.logger)
            .refetch(connection: connection, token: token ?? task.lineage, voided: voided, source: source, mirrors: [connection])
        let metrics = metrics
        let snapshot: StoreSnapshot
        switch answer {
        case .snapshot(let fetched): snapshot = fetched
        case .pending: return .done("pending: nothing mirrored yet")
        case .unanswered(let error) where error.code == .gone && ["expired", "revoked"].contains(mirrored?.state):
            // An ended purchase between Google's ~60-day memory and the resync horizon: nothing left to read, and a
            // dead letter a day for each would bury real ones. A voided order still books (`.refunds`). One the
            // mirror still holds live is drift no read can repair: that dead-letters, for on-call to see.
            return .done("skipped: Google no longer answers for the purchase (410); the daily resync drops it at its horizon")
        case .unanswered(let error):
            throw tools.failure(error, previous: job.lastError, logger: context.logger)
        case .refunds(let update, let connection):
            return .done("resynced refunds only: Google no longer answers for the token", writes: { db in
                try StoreFailures.mirroring {
                    let outcome = try Mirror.applyRefunds(update, connection: connection, on: db)
                    try Drift.record(outcome, connectionID: connection.id, metrics: metrics, on: db)
                }
            }, serialKey: Mirror.lockKey(connectionID: connection.id, lineage: update.lineage))
        }
        guard snapshot.environment == connection.environment else { return .done("skipped: environment mismatch") }
        return .done("resynced", writes: { db in
            try StoreFailures.mirroring {
                let outcome = try Mirror.apply(snapshot, connection: connection, on: db)
                try Drift.record(outcome, connectionID: connection.id, metrics: metrics, on: db)
                try GoogleAcknowledgement.scheduleIfNeeded(snapshot, outcome: outcome, connection: connection, on: db)
            }
        }, serialKey: Mirror.lockKey(connectionID: connection.id, lineage: snapshot.lineage))
    }
}
