import Crypto
import Foundation

/// The bearer token for App Store Server API requests: an ES256 JWT signed with the connection's
/// App Store Connect in-app purchase key (`.p8`).
public struct AppStoreAPIToken: Sendable {
    /// Apple refuses tokens that expire more than 60 minutes after they were issued.
    public static let maximumLifetime: Duration = .seconds(3600)

    public let keyID: String
    public let issuerID: String
    public let bundleID: String
    private let key: PrivateKey

    public init(keyID: String, issuerID: String, bundleID: String, privateKey: PrivateKey) throws {
        guard privateKey.kind == .ecP256 else {
            throw CryptoError(.invalidKey, "an App Store Connect API key is EC P-256, this one is \(privateKey.kind)")
        }
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.key = privateKey
    }

    /// A token valid from `issuedAt` for `lifetime` (at most 60 minutes).
    public func make(issuedAt: Date = Date(), lifetime: Duration = .seconds(3600)) throws -> String {
        guard lifetime > .zero, lifetime <= Self.maximumLifetime else {
            throw CryptoError(.invalidKey, "App Store API tokens may live at most 60 minutes")
        }
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        let claims: [String: Any] = [
            "iss": issuerID, "iat": iat, "exp": iat + lifetime.components.seconds, "aud": "appstoreconnect-v1",
            "bid": bundleID,
        ]
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return try CompactJWS.sign(payload: payload, algorithm: .es256, key: key, kid: keyID, typ: "JWT")
    }
}
