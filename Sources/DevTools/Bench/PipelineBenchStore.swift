import Accounts
import Foundation

/// The store-specific half of `bench pipeline`: its simulator, the connection that points StoreSync at it,
/// and the scenario calls that make it notify. Everything measured and reported is shared, so the stores'
/// figures mean the same thing.
protocol PipelineBenchStore: Sendable {
    /// `notification_receipts.store` and the report's `store`.
    static var name: String { get }
    /// The worker job whose outcomes are the notifications' outcomes.
    static var notificationKind: String { get }
    /// The ingest path the simulator posts to.
    static var webhookPath: String { get }

    /// Starts the simulator (API answers at once until `setLatency`), posting to `webhookURL` with `host` as
    /// the `Host` header.
    static func start(webhookURL: String, host: String) async throws -> Self
    func stop() async
    func setLatency(_ latency: Duration) throws
    /// The connection to the simulator, for `accountID`, requiring issued account tokens.
    func connection(accountID: Int64) throws -> Catalog.NewConnection
    /// The base plan the product is mapped with, when the store has them.
    var basePlanID: String? { get }
    /// The `notification_receipts.scope` the worker files this run's notifications under (`ReceiptScope`):
    /// their message ids are unique only within it, and an earlier run's may repeat them.
    func receiptScope(accountID: Int64) -> String
    /// Buys `PipelineBenchmark.productID` for the customer whose account token is `token`; returns the
    /// lineage later renewals name and how ingest answered the notification.
    func purchase(token: UUID) async throws -> (lineage: String, delivery: PipelineDelivery)
    func renew(_ lineage: String) async throws -> PipelineDelivery
    /// API requests the simulator answered so far, by endpoint.
    var requestCounts: [String: Int] { get }
}

/// One notification as the simulator delivered it: the id its receipt is stored under, and ingest's answer.
struct PipelineDelivery: Sendable {
    let messageID: String
    let httpStatus: Int?
    let error: String?
}
