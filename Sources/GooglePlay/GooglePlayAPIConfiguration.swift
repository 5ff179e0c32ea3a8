import Crypto

/// One store connection's access to the Play Developer API: which app, the service account that signs in, where
/// to send requests, and how fast to go.
public struct GooglePlayAPIConfiguration: Sendable {
    /// Google's API host (the discovery document's `baseUrl`).
    public static let googleAPIBaseURL = "https://androidpublisher.googleapis.com"

    /// The app's package name, which every API path names.
    public var packageName: String
    /// The service account's `client_email` from its JSON key file.
    public var clientEmail: String
    /// The key file's `private_key` (RSA).
    public var privateKey: PrivateKey
    /// The key file's `private_key_id`, sent as the assertion's `kid` so Google picks the right key at once.
    public var privateKeyID: String?
    /// The key file's `token_uri`; also the assertion's audience. Overridden for the local simulator.
    public var tokenURI: String
    /// Google's API host unless overridden (the local simulator, tests); `http` or `https`, no path.
    public var baseURL: String
    public var rateLimits: GooglePlayRateLimits
    /// An access token is replaced this long before Google's `expires_in` runs out, so no request carries one
    /// that expires in flight.
    public var tokenRenewalMargin: Duration = .seconds(60)
    /// How far the assertion's `iat` is set back: Google refuses assertions issued "in the future" by its clock,
    /// so a host clock slightly ahead would otherwise lock the connection out (Google's own libraries use 10 s).
    public var assertionBackdate: Duration = .seconds(10)
    /// Bounds each request, waiting for a connection included.
    public var requestTimeout: Duration = .seconds(30)

    public init(packageName: String, clientEmail: String, privateKey: PrivateKey, privateKeyID: String? = nil,
                tokenURI: String? = nil, baseURL: String? = nil, rateLimits: GooglePlayRateLimits = .google) {
        self.packageName = packageName
        self.clientEmail = clientEmail
        self.privateKey = privateKey
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI ?? ServiceAccountAssertion.defaultTokenURI
        self.baseURL = baseURL ?? Self.googleAPIBaseURL
        self.rateLimits = rateLimits
    }
}
