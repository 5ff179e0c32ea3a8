import AppStore
import Crypto
import Foundation
import HTTP
import TestPKI

/// The App Store Connect API key an app's server-API calls must be signed with: the simulator checks the
/// bearer token exactly as Apple does (`kid`, `iss`, `bid`, `aud`, lifetime, ES256 signature).
public struct SimulatedAPIKey: Sendable {
    public var keyID: String
    public var issuerID: String
    /// The public half of the `.p8` key StoreSync signs with.
    public var publicKey: PublicKey

    public init(keyID: String, issuerID: String, publicKey: PublicKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.publicKey = publicKey
    }
}

/// One app in the simulated App Store: what its signed payloads say about it and how its subscriptions run.
public struct SimulatedApp: Sendable {
    public var bundleID: String
    /// Required for Production, as Apple's production payloads always carry it; optional in Sandbox.
    public var appAppleID: Int64?
    public var environment: AppStoreEnvironment
    public var apiKey: SimulatedAPIKey
    public var bundleVersion = "1.0"
    /// Every product of the app belongs to this one subscription group.
    public var subscriptionGroupIdentifier = "21000001"
    /// The length of a paid period. A fixed length (not calendar months) keeps scenarios exact.
    public var renewalPeriod: Duration = .seconds(30 * 86_400)
    /// Paid periods of products that do not run for `renewalPeriod` (a yearly product beside monthly ones), by
    /// product id: a purchase, renewal, upgrade or downgrade to the product runs for its own period.
    public var productPeriods: [String: Duration] = [:]
    public var freeTrialPeriod: Duration = .seconds(7 * 86_400)
    /// How long access continues after a failed renewal when a scenario asks for a grace period.
    public var gracePeriod: Duration = .seconds(16 * 86_400)
    /// ISO 3166-1 alpha-3 storefront and Apple's numeric id for it.
    public var storefront = "USA"
    public var storefrontID = "143441"

    public init(bundleID: String, appAppleID: Int64?, environment: AppStoreEnvironment, apiKey: SimulatedAPIKey) {
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
        self.apiKey = apiKey
    }

    func renewalPeriod(of productId: String) -> Duration {
        productPeriods[productId] ?? renewalPeriod
    }
}

/// Where notifications go: StoreSync's `POST /webhook/apple`, with the `Host` its ingest maps to an account.
public struct NotificationTarget: Sendable {
    public var url: String
    /// Sent as the `Host` header instead of the URL's host, so one local ingest can serve several accounts.
    public var host: String?
    public var timeout: Duration = .seconds(10)

    public init(url: String, host: String? = nil) {
        self.url = url
        self.host = host
    }
}

/// What an `AppStoreSimulator` serves and where it sends notifications; checked when the simulator starts.
public struct SimulatorConfiguration: Sendable {
    /// Where the simulated App Store listens; port 0 picks a free port (read it from `AppStoreSimulator.port`).
    public var host = "127.0.0.1"
    public var port: UInt16 = 0
    public var apps: [SimulatedApp]
    /// `nil` records notifications (for the notification-history endpoint and tests) without sending them.
    public var notificationTarget: NotificationTarget?
    /// Settings of the client that sends notifications (a CA file for an HTTPS ingest, timeouts).
    public var notificationClient = HTTPClientConfiguration()
    /// The simulated clock's start; it moves only when a scenario moves it, so runs are reproducible.
    public var clockStart = Date()
    /// The signing PKI; generated when `nil`, valid from a day before `clockStart` for 20 years so scenarios
    /// can move the clock far ahead.
    public var pki: LocalApplePKI?
    /// Transaction ids count up from just above this number (16 digits, like Apple's). Apple never reuses an
    /// id, but a simulator starts afresh each time: one restarted against a StoreSync database that mirrored
    /// an earlier run must start above the ids that run handed out, or its purchases collide with them.
    public var transactionNumberBase: Int64 = 2_000_000_000_000_000

    public init(apps: [SimulatedApp]) {
        self.apps = apps
    }

    func validated() throws -> [String: SimulatedApp] {
        guard !apps.isEmpty else { throw SimulatorError(.invalidConfiguration, "configure at least one app") }
        guard (0...StoreState.maximumTransactionNumberBase).contains(transactionNumberBase) else {
            throw SimulatorError(.invalidConfiguration,
                                 "the transaction number base must be 0...\(StoreState.maximumTransactionNumberBase)")
        }
        var byBundle: [String: SimulatedApp] = [:]
        for app in apps {
            guard !app.bundleID.isEmpty, app.bundleID.utf8.count <= 255 else {
                throw SimulatorError(.invalidConfiguration, "a bundle id must have 1 to 255 characters")
            }
            guard byBundle[app.bundleID] == nil else {
                throw SimulatorError(.invalidConfiguration, "bundle id \(app.bundleID) is configured twice")
            }
            guard app.environment == .production || app.environment == .sandbox else {
                throw SimulatorError(.invalidConfiguration, "environment must be Production or Sandbox, not \(app.environment)")
            }
            if app.environment == .production, app.appAppleID == nil {
                throw SimulatorError(.invalidConfiguration, "Production app \(app.bundleID) needs an App Apple ID")
            }
            guard app.apiKey.publicKey.kind == .ecP256 else {
                throw SimulatorError(.invalidConfiguration, "an App Store Connect API key is EC P-256")
            }
            for (product, _) in app.productPeriods where product.isEmpty || product.utf8.count > 255 {
                throw SimulatorError(.invalidConfiguration,
                                     "a product id must have 1 to 255 characters, got \(product.debugDescription)")
            }
            let periods = [("the renewal period", app.renewalPeriod), ("the free trial period", app.freeTrialPeriod),
                           ("the grace period", app.gracePeriod)]
                + app.productPeriods.sorted { $0.key < $1.key }.map { ("the period of \($0.key)", $0.value) }
            for (name, period) in periods where !(Duration.milliseconds(1)...ClockBounds.longestSpan).contains(period) {
                throw SimulatorError(.invalidConfiguration, "\(name) must be 1 ms to 100 years")
            }
            byBundle[app.bundleID] = app
        }
        return byBundle
    }
}
