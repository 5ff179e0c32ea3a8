import Accounts
import Foundation
import GooglePlay
import IngestJobs
import Logging
import Mirror
import Postgres
import Queue
import StoreModel
import Worker

/// The `google.notification` job: authenticate the Pub/Sub push → dedup on `messageId` within the push's
/// subscription (`ReceiptScope.google`: Pub/Sub ids are unique only per topic) → re-fetch the
/// purchase from the Play Developer API → mirror, with the receipt and the job's completion in one
/// transaction. The notification only says *that* a purchase changed.
struct GoogleNotificationHandler: JobHandler {
    let clients: GoogleStoreClients
    let metrics: SyncMetrics?

    func run(_ args: GoogleNotificationArgs, job: LeasedJob, context: JobContext) async throws -> JobResult {
        let envelope = try IngestEnvelope(args, job: job)
        let push: PubSubPush
        let notification: DeveloperNotification
        do {
            push = try PubSubPush(body: envelope.body)
            notification = try push.developerNotification()
        } catch {
            throw JobFailure.permanent("not a Play developer notification push: \(error)")
        }
        let messageID = push.messageID
        let scope = ReceiptScope.google(accountID: envelope.accountID, subscription: push.subscription,
                                        packageName: notification.packageName)
        let work = Work(notification)
        // The connections, the receipt and what the mirror knows of the token are read in one round trip, with other
        // jobs' reads; the receipt counts only once the push is authenticated.
        let (connections, seen, known) = try await context.reads.query(
            StoreConnections.finding(accountID: envelope.accountID, store: .google, appIdentifier: notification.packageName),
            NotificationReceipts.looking(store: "google", scope: scope, messageID: messageID),
            PurchaseTokens.known(token: work.token, accountID: envelope.accountID, store: .google,
                                 appIdentifier: notification.packageName, recentCharges: GoogleRefetch.maxEarlierOrders + 1))
        guard let primary = connections.first(where: { $0.environment == .production }) ?? connections.first else {
            throw JobFailure.permanent("no store connection for package \(notification.packageName) in account "
                                       + "\(envelope.accountID)")
        }
        let tools = try await clients.tools(for: primary, pool: context.pool)
        try await authenticate(envelope, with: tools, previousError: job.lastError)

        if seen != nil { return .done("duplicate") }
        let receipt = PendingReceipt(store: "google", scope: scope, messageID: messageID, receivedAt: envelope.receivedAt,
                              jobID: job.id)

        let (token, event, voided): (String, String, [VoidedOrder])
        switch work {
        case .record(let outcome): return receipt.complete(outcome)
        case .mirror(let purchaseToken, let name, let orders): (token, event, voided) = (purchaseToken, name, orders)
        }
        let source = SnapshotSource(kind: "notification", reference: messageID, event: event)
        let answer = try await GoogleRefetch(tools: tools, pool: context.pool, previousError: job.lastError, logger: context.logger)
            .refetch(connection: primary, token: token, voided: voided, source: source,
                     mirrors: [primary] + connections.filter { $0.id != primary.id },
                     known: known.first { $0.connectionID == primary.id })
        let logger = context.logger
        let snapshot: StoreSnapshot
        switch answer {
        case .snapshot(let fetched): snapshot = fetched
        case .pending: return receipt.complete("pending: nothing mirrored yet")
        case .unanswered(let error): throw tools.failure(error, previous: job.lastError, logger: logger)
        case .refunds(let update, let connection):
            let serialKey = Mirror.lockKey(connectionID: connection.id, lineage: update.lineage)
            return receipt.complete("mirrored refunds only: Google no longer answers for the token", serialKey: serialKey) { db in
                try StoreFailures.mirroring {
                    let outcome = try Mirror.applyRefunds(update, connection: connection, on: db)
                    logger.info("mirrored", ["message_id": .string(messageID), "type": .string(event),
                                             "result": .string(outcome.summary)])
                }
            }
        }
        // A licence tester's purchase is a sandbox purchase: mirrored only on a Sandbox connection.
        guard let connection = connections.first(where: { $0.environment == snapshot.environment }) else {
            return receipt.complete("skipped: environment mismatch")
        }
        let serialKey = Mirror.lockKey(connectionID: connection.id, lineage: snapshot.lineage)
        let readAhead = Mirror.readAhead(snapshot, connection: connection)
        return receipt.complete("mirrored", serialKey: serialKey, readAhead: readAhead) { db in
            try StoreFailures.mirroring {
                let outcome = try Mirror.apply(snapshot, connection: connection, on: db)
                try GoogleAcknowledgement.scheduleIfNeeded(snapshot, outcome: outcome, connection: connection, on: db)
                logger.info("mirrored", ["message_id": .string(messageID), "type": .string(event),
                                         "result": .string(outcome.summary)])
            }
        }
    }

    /// What a notification asks of the worker, known from its content alone.
    private enum Work {
        /// Only its receipt is recorded, with this outcome.
        case record(String)
        /// The purchase token is re-fetched and mirrored; `voided` names the charge a voided-purchase notification
        /// refunds.
        case mirror(token: String, event: String, voided: [VoidedOrder])

        init(_ notification: DeveloperNotification) {
            switch notification.content {
            case .test:
                self = .record("test")
            case .oneTimeProduct:
                self = .record("recorded: one-time product notification (one-time products are not mirrored yet)")
            case .other(let name):
                self = .record("recorded: \(name)")
            case .voidedPurchase(let void) where void.productType == 2:
                self = .record("recorded: voided one-time product (one-time products are not mirrored yet)")
            case .voidedPurchase(let void):
                self = .mirror(token: void.purchaseToken, event: "VOIDED_PURCHASE", voided: [
                    VoidedOrder(orderID: void.orderId, voidedAt: notification.eventTime, refundType: void.refundType),
                ])
            case .subscription(let subscription):
                self = .mirror(token: subscription.purchaseToken, event: "SUBSCRIPTION \(subscription.notificationType)",
                               voided: [])
            }
        }

        var token: String? {
            if case .mirror(let token, _, _) = self { token } else { nil }
        }
    }

    /// A push must carry the OIDC token Pub/Sub signs for this connection's push subscription; anything
    /// else is dead-lettered (and counted: a wrong audience or account fails every push).
    ///
    /// The token's `exp` and `iat` are judged at `receivedAt`, which our ingest set when the push arrived (the
    /// job's creation time, kept by dead-letter replays), not when this attempt runs: a token valid on
    /// arrival stays valid through a backlog, Play API retries and replays, while one already expired on
    /// arrival is still refused. Signature, issuer, audience and email are checked on every attempt. A key the
    /// cache does not hold may be one Google published a moment ago: it is retried a few times in a row
    /// (`StoreFailures.unknownSigningKey`), `previousError` being the job's last error.
    private func authenticate(_ envelope: IngestEnvelope, with tools: GoogleStoreClients.Tools,
                              previousError: String?) async throws {
        guard let authorization = envelope.authorization else {
            metrics?.verificationFailed(store: "google", code: "missing token")
            throw JobFailure.permanent("push authentication failed: the push carried no Authorization header")
        }
        do {
            _ = try await tools.pushVerifier.verify(authorization: authorization, now: envelope.receivedAt)
        } catch let error as PushTokenError {
            metrics?.verificationFailed(store: "google", code: error.code.description)
            if error.code == .unknownKey {
                throw StoreFailures.unknownSigningKey.decide("push authentication failed: \(error)", previous: previousError)
            }
            throw error.isRetryable ? JobFailure.retryable("push authentication: \(error)")
                : JobFailure.permanent("push authentication failed: \(error)")
        }
    }
}
