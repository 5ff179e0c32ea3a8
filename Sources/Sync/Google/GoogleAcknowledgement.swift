import Accounts
import Crypto
import Foundation
import GooglePlay
import Mirror
import Postgres
import Queue
import StoreModel
import Worker

/// Google refunds a purchase token left unacknowledged for three days — every token: an upgrade, downgrade or
/// re-signup issues a new one that needs its own acknowledgement. A linked purchase whose token Google still
/// waits on gets a `google.acknowledge` job for that token, queued in the same transaction as the mirror (so it
/// is sent only for what was really mirrored) and at most one pending per token; a token already acknowledged
/// (`purchase_tokens.acknowledged_at`) gets none, even from a snapshot fetched before that acknowledgement.
enum GoogleAcknowledgement {
    /// Due within days, not hours: after notifications and consumption answers, before resync backlog.
    static let priority: Int16 = 10

    static func scheduleIfNeeded(_ snapshot: StoreSnapshot, outcome: Mirror.Outcome, connection: StoreConnection,
                                 on db: isolated PostgresConnection) throws {
        guard snapshot.needsAcknowledgement, outcome.customerID != nil, let token = snapshot.purchaseToken else { return }
        guard !outcome.tokenAcknowledged else {
            // An answer fetched before that acknowledgement committed still says pending; applied fresh, it set
            // the purchase's flag again for a token that is done.
            if outcome.applied { try Purchases.clearNeedsAcknowledgement(purchaseID: outcome.purchaseID, on: db) }
            return
        }
        let task = GoogleAcknowledgementArgs(connectionID: connection.id, purchaseID: outcome.purchaseID,
                                             productID: snapshot.productID, token: token, lineage: snapshot.lineage)
        let digest = Hex.encode(Digest.sha256(Data(token.utf8)).prefix(16))
        try JobQueue.enqueueLater(NewJob(task, priority: priority, uniqueKey: "google.ack:\(connection.id):\(digest)"), on: db)
    }
}

/// The `google.acknowledge` job.
struct GoogleAcknowledgeHandler: JobHandler {
    let clients: GoogleStoreClients

    func run(_ task: GoogleAcknowledgementArgs, job: LeasedJob, context: JobContext) async throws -> JobResult {
        // The write updates the purchase's row, as the lineage's mirrors do, so it commits under the lineage's
        // serial key: the task's own, or read from the purchase it names when an older release queued it.
        let (connection, lineage) = try await context.pool.run { db in
            (try StoreConnections.get(id: task.connectionID, on: db),
             try task.lineage ?? Purchases.lineage(purchaseID: task.purchaseID, on: db))
        }
        guard let connection else { throw JobFailure.permanent("store connection \(task.connectionID) no longer exists") }
        let tools = try await clients.tools(for: connection, pool: context.pool)
        let client = tools.client
        do {
            try await client.acknowledge(subscriptionID: task.productID, token: task.token)
        } catch let error as GooglePlayAPIError where error.code == .rejected {
            // Refused because it is acknowledged already (by an earlier attempt whose answer was lost)? Google's
            // own state says; anything else stays an error.
            let state = try? await client.subscription(token: task.token).acknowledgementState
            guard state == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" else {
                throw tools.failure(error, previous: job.lastError, logger: context.logger)
            }
        } catch let error as GooglePlayAPIError {
            throw tools.failure(error, previous: job.lastError, logger: context.logger)
        }
        return .done("acknowledged", writes: { db in
            try Self.record(task, on: db)
        }, serialKey: lineage.map { Mirror.lockKey(connectionID: connection.id, lineage: $0) })
    }

    /// Marks the task's token acknowledged (`PurchaseTokens.recordAcknowledgement`).
    static func record(_ task: GoogleAcknowledgementArgs, on db: isolated PostgresConnection) throws {
        try PurchaseTokens.recordAcknowledgement(of: task.token, connectionID: task.connectionID, purchaseID: task.purchaseID,
                                                 on: db)
    }
}
