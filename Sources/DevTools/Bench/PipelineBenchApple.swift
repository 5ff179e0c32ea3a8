import Accounts
import CLI
import Crypto
import Foundation
import Ingest
import Simulator
import StoreModel
import Sync

/// `bench pipeline --store apple`: the local App Store posts signed notifications to `/webhook/apple`; each
/// one makes the worker re-fetch the lineage's statuses and history.
struct ApplePipelineBenchStore: PipelineBenchStore {
    static let name = "apple"
    static let notificationKind = WebhookSource.apple.jobKind.name
    static let webhookPath = "/webhook/apple"
    static let bundleID = "com.storesync.bench"
    static let appAppleID: Int64 = 1_000_000_001
    static let keyID = "BENCHKEY01"
    static let issuerID = "storesync-bench"

    let simulator: AppStoreSimulator
    let key: PrivateKey

    static func start(webhookURL: String, host: String) async throws -> ApplePipelineBenchStore {
        let key = try PrivateKey.generate(.ecP256)
        let apiKey = SimulatedAPIKey(keyID: keyID, issuerID: issuerID, publicKey: key.publicKey)
        var configuration = SimulatorConfiguration(apps: [
            SimulatedApp(bundleID: bundleID, appAppleID: appAppleID, environment: .production, apiKey: apiKey),
        ])
        configuration.notificationTarget = NotificationTarget(url: webhookURL, host: host)
        return ApplePipelineBenchStore(simulator: try AppStoreSimulator(configuration: configuration), key: key)
    }

    func stop() async { await simulator.stop() }

    func setLatency(_ latency: Duration) throws { try simulator.setLatency(latency) }

    func settings() throws -> PipelineStoreSettings {
        PipelineStoreSettings(apiBaseURL: simulator.baseURL, apiPrivateKeyPEM: try key.pem(),
                              trustedRootsPEM: simulator.rootCertificate.pem)
    }

    static func connection(_ settings: PipelineStoreSettings, accountID: Int64) -> Catalog.NewConnection {
        var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: bundleID,
                                        environment: .production)
        new.appAppleID = appAppleID
        new.requireIssuedTokens = true
        new.apiKeyID = keyID
        new.apiIssuerID = issuerID
        new.apiPrivateKeyPEM = settings.apiPrivateKeyPEM
        new.apiBaseURL = settings.apiBaseURL
        new.trustedRootsPEM = settings.trustedRootsPEM
        return new
    }

    static var basePlanID: String? { nil }

    static func receiptScope(_ settings: PipelineStoreSettings, accountID: Int64) -> String { ReceiptScope.apple }

    func purchase(token: UUID) async throws -> (lineage: String, delivery: PipelineDelivery) {
        // Apple prices are in milliunits: 9.99 USD.
        let bought = try await simulator.subscribe(productId: PipelineBenchmark.productID, price: 9_990, currency: "USD",
                                                   appAccountToken: token)
        return (bought.originalTransactionId, try Self.delivery(bought.notification))
    }

    func renew(_ lineage: String) async throws -> PipelineDelivery {
        try Self.delivery(try await simulator.renew(lineage).notification)
    }

    /// Apple limits each endpoint on its own.
    static func quotaBucket(_ endpoint: String) -> String? {
        switch SimulatorEndpoint(rawValue: endpoint) {
        case .subscriptionStatuses?: "subscription_statuses"
        case .transactionHistory?: "transaction_history"
        case .consumption?: "consumption"
        case .notificationHistory?: "notification_history"
        case nil: nil
        }
    }

    var requestCounts: [String: Int] {
        Dictionary(uniqueKeysWithValues: simulator.requestCounts.map { ($0.key.rawValue, $0.value) })
    }

    private static func delivery(_ notification: NotificationRecord?) throws -> PipelineDelivery {
        guard let notification else { throw SetupError(.mismatch, "the App Store simulator sent no notification") }
        return PipelineDelivery(messageID: notification.notificationUUID, httpStatus: notification.delivery.httpStatus,
                                error: notification.delivery.error)
    }
}
