import Crypto
import Foundation
import GooglePlay
import Mirror
import Postgres
import Queue
import StoreModel
import Worker

/// Google refunds a purchase left unacknowledged for three days. A linked production purchase that Google
/// still waits on gets a `google.acknowledge` job, queued in the same transaction as the mirror (so it is
/// sent only for what was really mirrored) and at most one pending per token.
enum GoogleAcknowledgement {
    static let kind = "google.acknowledge"
    /// Due within days, not hours: after notifications and consumption answers, before resync backlog.
    static let priority: Int16 = 10

    struct Task: Codable, Sendable {
        let connectionID: Int64
        let purchaseID: Int64
        let productID: String
        let token: String
    }

    static func scheduleIfNeeded(_ snapshot: StoreSnapshot, outcome: Mirror.Outcome, connection: StoreConnection,
                                 on db: isolated PostgresConnection) throws {
        guard snapshot.needsAcknowledgement, outcome.customerID != nil, let token = snapshot.purchaseToken else { return }
        let acknowledged: Bool = try db.query("SELECT acknowledged_at IS NOT NULL FROM store_purchases WHERE id = $1",
                                              [outcome.purchaseID])[0].decode(0)
        guard !acknowledged else { return }
        let task = Task(connectionID: connection.id, purchaseID: outcome.purchaseID, productID: snapshot.productID,
                        token: token)
        let digest = Hex.encode(Digest.sha256(Data(token.utf8)).prefix(16))
        _ = try JobQueue.enqueue(NewJob(kind: kind, payload: String(decoding: try JSONEncoder().encode(task), as: UTF8.self),
                                        priority: priority, uniqueKey: "google.ack:\(connection.id):\(digest)"), on: db)
    }
}

/// The `google.acknowledge` job.
struct GoogleAcknowledgeHandler: JobHandler {
    let registry: GoogleConnectionRegistry

    func run(_ job: LeasedJob, context: JobContext) async throws -> JobResult {
        guard let task = try? JSONDecoder().decode(GoogleAcknowledgement.Task.self, from: Data(job.payload.utf8)) else {
            throw JobFailure.permanent("the job payload is not a google.acknowledge task")
        }
        // The write updates the purchase's row, as the lineage's mirrors do, so it commits under the lineage's
        // serial key; read from the row, which every task names, whichever release queued it.
        let (connection, lineage) = try await context.pool.run { db in
            (try StoreConnections.get(id: task.connectionID, on: db),
             try db.query("SELECT lineage FROM store_purchases WHERE id = $1", [task.purchaseID])
                .first?.decode(0, as: String.self))
        }
        guard let connection else { throw JobFailure.permanent("store connection \(task.connectionID) no longer exists") }
        let client = try registry.tools(for: connection).client
        do {
            try await client.acknowledge(subscriptionID: task.productID, token: task.token)
        } catch let error as GooglePlayAPIError where error.code == .rejected {
            // Refused because it is acknowledged already (by an earlier attempt whose answer was lost)? Google's
            // own state says; anything else stays an error.
            let state = try? await client.subscription(token: task.token).acknowledgementState
            guard state == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" else {
                throw StoreFailures.api(error, attempt: job.attempt)
            }
        } catch let error as GooglePlayAPIError {
            throw StoreFailures.api(error, attempt: job.attempt)
        }
        return .done("acknowledged", writes: { db in
            _ = try db.query("""
                UPDATE store_purchases SET acknowledged_at = now(), needs_acknowledgement = false WHERE id = $1
                """, [task.purchaseID])
            return nil
        }, serialKey: lineage.map { Mirror.lockKey(connectionID: connection.id, lineage: $0) })
    }
}
