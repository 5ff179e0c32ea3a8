import Crypto
import HTTP

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

extension GooglePlayAPIConfiguration {
    private static let packageBytes = Set((PercentEncoding.alphanumerics + "._").utf8)

    /// Checks what a connection's settings say (package, service account, key, URLs) against Google's rules, so
    /// `connections add` refuses what every job would otherwise dead-letter on, with the same words.
    /// - Throws: `.invalidConfiguration`, naming the setting.
    public func validateConnection() throws(GooglePlayAPIError) {
        func invalid(_ reason: String) -> GooglePlayAPIError { GooglePlayAPIError(.invalidConfiguration, reason) }
        let package = packageName
        guard (1...255).contains(package.utf8.count), package.utf8.allSatisfy({ Self.packageBytes.contains($0) }),
              package.utf8.contains(where: { $0 != UInt8(ascii: ".") }) else {
            throw invalid("package name \(package.prefix(64).debugDescription) is not 1 to 255 letters, digits, '_' or '.'")
        }
        let email = clientEmail
        guard (3...320).contains(email.utf8.count), email.contains("@"), email.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw invalid("client email \(email.prefix(64).debugDescription) is not a service account's email")
        }
        guard case .rsa(let bits) = privateKey.kind, (2048...4096).contains(bits) else {
            throw invalid("a service-account key is RSA of 2048 to 4096 bits, this one is \(privateKey.kind)")
        }
        for (name, url) in [("base URL", baseURL), ("token URI", tokenURI)] {
            guard url.hasPrefix("https://") || url.hasPrefix("http://"), !url.contains("?"), !url.contains("#"),
                  url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw invalid("\(name) \(url.prefix(100).debugDescription) is not an http(s) URL without query or fragment")
            }
        }
    }
}
