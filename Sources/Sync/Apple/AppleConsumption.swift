import Accounts
import AppStore
import Foundation
import Mirror
import Postgres
import Queue
import Worker

/// Turns a verified `CONSUMPTION_REQUEST` into an `apple.consumption` job due by `signedDate` + 12 h.
struct AppleConsumptionScheduler: Sendable {
    static let window: TimeInterval = 12 * 3600

    func schedule(_ notification: NotificationPayload, connection: StoreConnection,
                  tools: AppleStoreClients.Tools, receipt: PendingReceipt) throws -> JobResult {
        guard connection.answerConsumptionRequests else {
            return receipt.complete("skipped: consumption requests are not answered on this connection")
        }
        let enclosed: TransactionPayload?
        do {
            enclosed = try tools.verifier.enclosedTransaction(of: notification)
        } catch let error as AppStoreVerificationError {
            throw StoreFailures.verification(error)
        }
        guard let transaction = enclosed else {
            throw JobFailure.permanent("CONSUMPTION_REQUEST without signedTransactionInfo")
        }
        guard let transactionID = transaction.transactionId else {
            throw JobFailure.permanent("CONSUMPTION_REQUEST names no transactionId")
        }
        let deadline = (notification.signedDate ?? Date()).addingTimeInterval(Self.window)
        let task = AppleConsumptionArgs(connectionID: connection.id, transactionID: transactionID,
                                        deadlineMilliseconds: Int64(deadline.timeIntervalSince1970 * 1000),
                                        notificationUUID: notification.notificationUUID,
                                        productType: transaction.type ?? ConsumptionRequest.ProductType.autoRenewableSubscription.rawValue)
        let job = try NewJob(task, priority: AppleConsumptionHandler.priority,
                             uniqueKey: "apple.consumption:\(connection.id):\(transactionID)")
        return receipt.complete("consumption answer scheduled") { db in
            try JobQueue.enqueueLater(job, on: db)
        }
    }
}

/// The `apple.consumption` job: answers Apple's consumption request with the usage values the backend
/// recorded — only with the customer's consent, only before the deadline.
struct AppleConsumptionHandler: JobHandler {
    /// Deadlines beat backlog: the answer is due 12 hours after Apple asks, so it leases before
    /// notifications (priority 0) and far before resync work.
    static let priority: Int16 = 100

    let clients: AppleStoreClients

    func run(_ task: AppleConsumptionArgs, job: LeasedJob, context: JobContext) async throws -> JobResult {
        guard Date() < task.deadline else {
            throw JobFailure.permanent("deadline passed: Apple wanted the answer by \(task.deadline.formatted(.iso8601))")
        }
        let (connection, usage) = try await context.pool.transaction { db in
            (try StoreConnections.get(id: task.connectionID, on: db), try ConsumptionUsage.find(task.transactionID, on: db))
        }
        guard let connection else { throw JobFailure.permanent("store connection \(task.connectionID) no longer exists") }
        guard connection.answerConsumptionRequests else {
            return .done("skipped: consumption requests are not answered on this connection")
        }
        guard let usage, usage.customerConsented else { return .done("skipped: no consent") }
        let request: ConsumptionRequest
        do {
            request = try usage.request(defaultPreference: connection.consumptionRefundPreference,
                                        productType: task.productType)
        } catch {
            throw JobFailure.permanent("the recorded usage cannot be sent: \(error)")
        }
        let tools = try await clients.tools(for: connection, pool: context.pool)
        do {
            try await tools.client.sendConsumption(transactionID: task.transactionID, request: request)
        } catch let error as AppStoreAPIError {
            // The id came from the CONSUMPTION_REQUEST's verified signedTransactionInfo: Apple vouched for it.
            throw StoreFailures.api(error, previous: job.lastError, vouched: true)
        }
        if usage.consumptionPercentage != nil && request.consumptionPercentage == nil {
            return .done("sent without the recorded consumptionPercentage: Apple computes it for auto-renewable "
                         + "subscriptions")
        }
        return .done("sent")
    }
}

extension ConsumptionUsage {
    /// Apple's request from these values, validated by Apple's documented rules before anything is sent. A
    /// percentage recorded for an auto-renewable subscription is left out: Apple computes that share itself and
    /// would reject the whole answer for it.
    func request(defaultPreference: String?, productType: String) throws -> ConsumptionRequest {
        guard let delivery = ConsumptionRequest.DeliveryStatus(rawValue: deliveryStatus) else {
            throw JobFailure.permanent("unknown deliveryStatus \(deliveryStatus)")
        }
        guard let type = ConsumptionRequest.ProductType(rawValue: productType) else {
            throw JobFailure.permanent("consumption answers are not supported for product type \(productType)")
        }
        let preference = try (refundPreference ?? defaultPreference).map { name in
            guard let preference = ConsumptionRequest.RefundPreference(rawValue: name) else {
                throw JobFailure.permanent("unknown refundPreference \(name)")
            }
            return preference
        }
        let percentage = type == .autoRenewableSubscription ? nil : consumptionPercentage
        let request = ConsumptionRequest(customerConsented: customerConsented, deliveryStatus: delivery,
                                         sampleContentProvided: sampleContentProvided,
                                         consumptionPercentage: percentage, refundPreference: preference,
                                         productType: type)
        try request.validate()
        return request
    }
}
