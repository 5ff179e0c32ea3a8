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
    /// What a StoreSync in another process needs to reach this simulator.
    func settings() throws -> PipelineStoreSettings
    /// The connection to the simulator `settings` describe, for `accountID`, requiring issued account tokens.
    static func connection(_ settings: PipelineStoreSettings, accountID: Int64) -> Catalog.NewConnection
    /// The base plan the product is mapped with, when the store has them.
    static var basePlanID: String? { get }
    /// The `notification_receipts.scope` the worker files this run's notifications under (`ReceiptScope`):
    /// their message ids are unique only within it, and an earlier run's may repeat them.
    static func receiptScope(_ settings: PipelineStoreSettings, accountID: Int64) -> String
    /// Buys `PipelineBenchmark.productID` for the customer whose account token is `token`; returns the
    /// lineage later renewals name and how ingest answered the notification.
    func purchase(token: UUID) async throws -> (lineage: String, delivery: PipelineDelivery)
    func renew(_ lineage: String) async throws -> PipelineDelivery
    /// The store's quota bucket that counts calls of `endpoint` (a `requestCounts` key); nil for one outside
    /// every quota (Google's token and key endpoints).
    static func quotaBucket(_ endpoint: String) -> String?
    /// API requests the simulator answered so far, by endpoint.
    var requestCounts: [String: Int] { get }
}

extension PipelineBenchStore {
    /// The connection to this simulator, for `accountID`.
    func connection(accountID: Int64) throws -> Catalog.NewConnection {
        Self.connection(try settings(), accountID: accountID)
    }
}

/// A simulator's addresses and keys, as the stores' process of `bench pipeline` hands them to StoreSync's.
struct PipelineStoreSettings: Codable, Sendable {
    var apiBaseURL: String
    /// The API key (Apple) or service-account key (Google) StoreSync signs with.
    var apiPrivateKeyPEM: String
    /// Apple: the root the simulator's signatures chain to.
    var trustedRootsPEM: String?
    /// Google: the OAuth token endpoint, the push keys, the pushes' audience and Pub/Sub subscription.
    var tokenURI: String?
    var certificatesURL: String?
    var pushAudience: String?
    var subscription: String?
}

/// One notification as the simulator delivered it: the id its receipt is stored under, and ingest's answer.
struct PipelineDelivery: Sendable {
    let messageID: String
    let httpStatus: Int?
    let error: String?
}
