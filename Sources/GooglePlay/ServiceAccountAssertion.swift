import Crypto
import Foundation

/// Why a service-account assertion could not be made. Raised before anything is signed, so a
/// misconfiguration surfaces as itself rather than as a token Google refuses later.
public struct ServiceAccountAssertionError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The lifetime is not between one second and Google's one-hour maximum.
        public static let invalidLifetime = Code("invalid lifetime")
        /// The client email, scope or token URI is empty.
        public static let missingField = Code("missing field")

        public var description: String { name }
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "cannot make service-account assertion (\(code)): \(reason)" }
}

/// The signed JWT a service account presents to Google's token endpoint (the JWT-bearer grant, RFC 7523)
/// to get an access token for the Play Developer API, without any Google client library.
public enum ServiceAccountAssertion {
    /// The scope the Play Developer API (purchases, subscriptions) requires.
    public static let androidPublisherScope = "https://www.googleapis.com/auth/androidpublisher"
    /// Google's OAuth 2.0 token endpoint, the `token_uri` of every service-account key file.
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"
    /// The longest lifetime Google accepts for an assertion.
    public static let maximumLifetime: Duration = .seconds(3600)

    /// A compact RS256 JWT with `iss` = `clientEmail`, `scope`, `aud` = `tokenURI`, `iat` = `now` and
    /// `exp` = `now` + `lifetime` (whole seconds). `keyID` is the key file's `private_key_id`, which lets
    /// Google pick the right public key at once. Throws `ServiceAccountAssertionError` for a lifetime
    /// outside 1 s…1 h or an empty field, and `CryptoError` when the key is not an RSA key.
    public static func make(clientEmail: String, privateKey: PrivateKey, scope: String = androidPublisherScope,
                            tokenURI: String = defaultTokenURI, now: Date = Date(), lifetime: Duration = maximumLifetime,
                            keyID: String? = nil) throws -> String {
        for (name, value) in [("client email", clientEmail), ("scope", scope), ("token URI", tokenURI)] where value.isEmpty {
            throw ServiceAccountAssertionError(.missingField, "the \(name) is empty")
        }
        guard lifetime >= .seconds(1), lifetime <= maximumLifetime else {
            throw ServiceAccountAssertionError(.invalidLifetime, "lifetime \(lifetime) is not between 1 second and 1 hour")
        }
        struct Claims: Encodable {
            let iss: String
            let scope: String
            let aud: String
            let iat: Int64
            let exp: Int64
        }
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let claims = Claims(iss: clientEmail, scope: scope, aud: tokenURI, iat: issuedAt,
                            exp: issuedAt + lifetime.components.seconds)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try CompactJWS.sign(payload: try encoder.encode(claims), algorithm: .rs256, key: privateKey, kid: keyID,
                                   typ: "JWT")
    }
}
