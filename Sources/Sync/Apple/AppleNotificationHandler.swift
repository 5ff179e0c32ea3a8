import AppStore
import Foundation
import IngestJobs
import Logging
import Mirror
import Postgres
import Queue
import StoreModel
import Worker

/// The `apple.notification` job: verify → dedup → environment → re-fetch → mirror, with the receipt, the
/// mirror's writes and the job's completion committed together. The notification only says *that*
/// something happened; what happened comes from the App Store Server API.
struct AppleNotificationHandler: JobHandler {
    let clients: AppleStoreClients
    let consumption: AppleConsumptionScheduler
    let metrics: SyncMetrics?

    func run(_ args: AppleNotificationArgs, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let envelope = try IngestEnvelope(args, job: job)
        let signedPayload: String
        let routing: NotificationRouting
        do {
            signedPayload = try NotificationRouting.signedPayload(fromBody: envelope.body)
            routing = try NotificationRouting(unverified: signedPayload)
        } catch let error as AppStoreVerificationError {
            metrics?.verificationFailed(store: "apple", code: error.code.description)
            throw StoreFailures.verification(error)
        }
        let reads = try await AppleNotificationReads.read(accountID: envelope.accountID, claims: routing, reads: context.reads)
        let connections = reads.connections
        guard !connections.isEmpty else {
            throw JobFailure.permanent("no store connection for bundle \(routing.bundleID) in account \(envelope.accountID)")
        }
        // The connection of the notification's own environment if there is one; otherwise the app's only
        // connection, which then skips it as an environment mismatch.
        let connection = connections.first { $0.environment.rawValue == routing.environment?.rawValue } ?? connections[0]
        let tools = try await clients.tools(for: connection, pool: context.pool)

        let notification: NotificationPayload
        do {
            notification = try tools.verifyNotification(signedPayload, claims: routing)
        } catch let error as AppStoreVerificationError {
            metrics?.verificationFailed(store: "apple", code: error.code.description)
            throw StoreFailures.verification(error)
        }
        let uuid = notification.notificationUUID
        let event = [notification.notificationType, notification.subtype].compactMap { $0 }.joined(separator: "/")
        context.logger.debug("notification verified", ["uuid": .string(uuid), "type": .string(event),
                                                        "connection": .int(Int(connection.id))])

        if try await reads.alreadyProcessed(uuid, pool: context.pool) { return .done("duplicate") }
        let receipt = PendingReceipt(store: "apple", scope: ReceiptScope.apple, messageID: uuid, receivedAt: envelope.receivedAt,
                              jobID: job.id)

        if routing.environment?.rawValue != connection.environment.rawValue {
            return receipt.complete("skipped: environment mismatch")
        }
        switch notification.notificationType {
        case "TEST":
            return receipt.complete("test")
        case "CONSUMPTION_REQUEST":
            return try consumption.schedule(notification, connection: connection, tools: tools, receipt: receipt)
        default:
            break
        }
        let enclosed: TransactionPayload?
        do {
            enclosed = try tools.verifier.enclosedTransaction(of: notification)
        } catch let error as AppStoreVerificationError {
            metrics?.verificationFailed(store: "apple", code: error.code.description)
            throw StoreFailures.verification(error)
        }
        guard let transaction = enclosed else { return receipt.complete("recorded: \(event) names no transaction") }
        // Only auto-renewable subscriptions are mirrored, as on Google Play: a one-time purchase has no
        // subscription status to re-fetch, and asking for one would only dead-letter it.
        if let type = transaction.type, ConsumptionRequest.ProductType(rawValue: type) != .autoRenewableSubscription {
            return receipt.complete("recorded: \(event) for a \(type) (one-time purchases are not mirrored yet)")
        }
        guard let transactionID = transaction.transactionId, let lineage = transaction.originalTransactionId else {
            throw JobFailure.permanent("the notification's transaction has no transactionId/originalTransactionId")
        }
        let source = SnapshotSource(kind: "notification", reference: uuid, event: event)
        let revision = try await reads.revision(connectionID: connection.id, lineage: lineage, pool: context.pool)
        let fetched = try await AppleRefetch(client: tools.client, logger: context.logger)
            .snapshot(connection: connection, lineage: lineage, transactionID: transactionID, revision: revision,
                      source: source, previousError: job.lastError, vouched: true)
        let serialKey = Mirror.lockKey(connectionID: connection.id, lineage: fetched.snapshot.lineage)
        let readAhead = Mirror.readAhead(fetched.snapshot, connection: connection)
        return receipt.complete("mirrored", serialKey: serialKey, readAhead: readAhead) { db in
            try StoreFailures.mirroring {
                let outcome = try Mirror.apply(fetched.snapshot, connection: connection, on: db)
                context.logger.info("mirrored", ["uuid": .string(uuid), "type": .string(event), "lineage": .string(lineage),
                                                 "result": .string(outcome.summary)])
                try AppleFollowUp.follow(fetched, outcome: outcome, connection: connection, logger: context.logger, on: db)
            }
        }
    }
}
