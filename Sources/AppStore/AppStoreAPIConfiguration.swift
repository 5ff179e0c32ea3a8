import Crypto
import StoreModel

/// One store connection's access to the App Store Server API: where to send requests, the in-app purchase
/// key that signs the bearer token, and how fast to go.
public struct AppStoreAPIConfiguration: Sendable {
    /// Apple's recommended hosts since 2026-05-05 (the older `…itunes.apple.com` names still work).
    public static let productionURL = "https://api.storekit.apple.com"
    public static let sandboxURL = "https://api.storekit-sandbox.apple.com"

    public var environment: StoreEnvironment
    /// Apple's host for `environment` unless overridden (the local simulator, tests); `http` or `https`.
    public var baseURL: String
    public var bundleID: String
    /// The in-app purchase key's id, issuer id and `.p8` key (EC P-256) from App Store Connect.
    public var keyID: String
    public var issuerID: String
    public var privateKey: PrivateKey
    public var rateLimits: AppStoreRateLimits
    /// How long one bearer token is used (Apple allows at most 60 minutes). A shorter life bounds how long a
    /// leaked token is worth anything.
    public var tokenLifetime: Duration = .seconds(1200)
    /// A token is replaced this long before its `exp`, so no request carries one that expires in flight.
    public var tokenRenewalMargin: Duration = .seconds(60)
    /// Bounds each request, waiting for a connection included (Apple's libraries use 30 s).
    public var requestTimeout: Duration = .seconds(30)
    /// Pages one `transactionHistory` call follows (Apple sends up to 20 transactions a page), so one
    /// customer with a long history cannot hold a job for minutes; the caller continues from the revision.
    public var maxHistoryPages: Int = defaultMaxHistoryPages
    /// 50 pages, up to 1,000 transactions: decades of renewals, read in seconds.
    public static let defaultMaxHistoryPages = 50

    public init(environment: StoreEnvironment, bundleID: String, keyID: String, issuerID: String, privateKey: PrivateKey,
                baseURL: String? = nil, rateLimits: AppStoreRateLimits? = nil) {
        self.environment = environment
        self.baseURL = baseURL ?? (environment == .production ? Self.productionURL : Self.sandboxURL)
        self.bundleID = bundleID
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKey = privateKey
        self.rateLimits = rateLimits ?? .apple(environment)
    }
}
