import Accounts
import CLI
import Crypto
import Foundation
import GooglePlay
import Ingest
import Simulator
import StoreModel
import Sync

/// `bench pipeline --store google`: the local Play Store pushes Pub/Sub messages (with their OIDC tokens) to
/// `/webhook/google-play`; each one makes the worker re-fetch the purchase from the Play Developer API, and a
/// linked purchase's first mirror queues its acknowledgement.
struct GooglePipelineBenchStore: PipelineBenchStore {
    static let name = "google"
    static let notificationKind = WebhookSource.googlePlay.jobKind.name
    static let webhookPath = "/webhook/google-play"
    static let packageName = "com.storesync.bench"
    static let clientEmail = "storesync@storesync-bench.iam.gserviceaccount.com"
    static let pushAccount = "push@storesync-bench.iam.gserviceaccount.com"
    static let basePlan = "monthly"

    let play: PlaySimulator
    let serviceAccountKey: PrivateKey
    let audience: String
    /// The Pub/Sub subscription the simulator's pushes name.
    let subscription: String

    static func start(webhookURL: String, host: String) async throws -> GooglePipelineBenchStore {
        let key = try PrivateKey.generate(.rsa(bits: 2048))
        // Hour-long periods: every renewal moves the shared simulated clock to its period's end, so a run's
        // clock stays within days of now.
        var app = SimulatedPlayApp(packageName: packageName)
        app.renewalPeriod = .seconds(3600)
        var configuration = PlaySimulatorConfiguration(
            apps: [app], serviceAccount: SimulatedServiceAccount(clientEmail: clientEmail, publicKey: key.publicKey))
        let audience = "https://\(host)\(webhookPath)"
        let target = PlayPushTarget(url: webhookURL, audience: audience, serviceAccountEmail: pushAccount, host: host)
        configuration.push = target
        // One delivery each, as the App Store simulator makes: a refused push counts as refused instead of
        // coming back in the background while the run is measured.
        configuration.pushRetry = PushRetryPolicy(minimumBackoff: .zero, maximumBackoff: .zero, maxAttempts: 1)
        return GooglePipelineBenchStore(play: try PlaySimulator(configuration: configuration), serviceAccountKey: key,
                                        audience: audience, subscription: target.subscription)
    }

    func stop() async { await play.stop() }

    func setLatency(_ latency: Duration) throws { try play.setLatency(latency) }

    func settings() throws -> PipelineStoreSettings {
        PipelineStoreSettings(apiBaseURL: play.baseURL, apiPrivateKeyPEM: try serviceAccountKey.pem(), tokenURI: play.tokenURI,
                              certificatesURL: play.certificatesURL, pushAudience: audience, subscription: subscription)
    }

    static func connection(_ settings: PipelineStoreSettings, accountID: Int64) -> Catalog.NewConnection {
        var new = Catalog.NewConnection(accountID: accountID, store: .google, appIdentifier: packageName,
                                        environment: .production)
        new.requireIssuedTokens = true
        new.apiClientEmail = clientEmail
        new.apiPrivateKeyPEM = settings.apiPrivateKeyPEM
        new.apiTokenURI = settings.tokenURI
        new.apiBaseURL = settings.apiBaseURL
        new.pushAudience = settings.pushAudience
        new.pushServiceAccount = pushAccount
        new.pushJWKSURL = settings.certificatesURL
        return new
    }

    static var basePlanID: String? { basePlan }

    static func receiptScope(_ settings: PipelineStoreSettings, accountID: Int64) -> String {
        ReceiptScope.google(accountID: accountID, subscription: settings.subscription ?? "", packageName: packageName)
    }

    func purchase(token: UUID) async throws -> (lineage: String, delivery: PipelineDelivery) {
        let bought = try await play.purchase(productId: PipelineBenchmark.productID, basePlanId: Self.basePlan, price: 999,
                                             currency: "USD", obfuscatedAccountId: token.uuidString)
        guard let lineage = bought.purchaseToken else {
            throw SetupError(.mismatch, "the Play simulator's purchase named no purchase token")
        }
        return (lineage, try Self.delivery(bought))
    }

    func renew(_ lineage: String) async throws -> PipelineDelivery {
        try Self.delivery(try await play.renew(lineage))
    }

    /// Google's buckets, named as the client's pacing names them.
    static func quotaBucket(_ endpoint: String) -> String? {
        let family: GooglePlayEndpointFamily? = switch PlayEndpoint(rawValue: endpoint) {
        case .subscriptionsV2?: .subscriptions
        case .acknowledge?: .subscriptionUpdates
        case .order?, .ordersBatchGet?: .orders
        case .voidedPurchases?: .voidedPurchases
        case .token?, .certificates?, nil: nil
        }
        return family?.rawValue
    }

    var requestCounts: [String: Int] {
        Dictionary(uniqueKeysWithValues: play.requestCounts.map { ($0.key.rawValue, $0.value) })
    }

    /// Purchases and renewals publish exactly one message.
    private static func delivery(_ result: PlayScenarioResult) throws -> PipelineDelivery {
        guard result.pushes.count == 1, let push = result.pushes.first, let attempt = push.attempts.first else {
            throw SetupError(.mismatch, "the Play simulator published \(result.pushes.count) messages, not one delivered one")
        }
        return PipelineDelivery(messageID: push.messageId, httpStatus: attempt.delivery.httpStatus,
                                error: attempt.delivery.error)
    }
}
