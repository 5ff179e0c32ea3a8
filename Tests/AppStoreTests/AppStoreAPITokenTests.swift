import AppStore
import Crypto
import Foundation
import Testing

/// Guards `AppStoreAPIToken`, the bearer token for App Store Server API calls: an ES256 JWT with Apple's
/// required header and claims, at most 60 minutes long, signed only with an EC P-256 key.
@Suite("App Store API token")
struct AppStoreAPITokenTests {
    static let key = try! PrivateKey.generate(.ecP256)
    static let issuedAt = Date(timeIntervalSince1970: 1_748_736_000.75)

    static func token() throws -> AppStoreAPIToken {
        try AppStoreAPIToken(keyID: "2X9R4HXF34", issuerID: "57246542-96fe-1a63-e053-0824d011072a",
                             bundleID: "com.example.storesync", privateKey: key)
    }

    static func claims(_ jws: CompactJWS) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
    }

    @Test("the header is alg ES256, kid and typ JWT")
    func header() throws {
        let jws = try CompactJWS(try Self.token().make(issuedAt: Self.issuedAt))
        #expect(jws.header.alg == "ES256")
        #expect(jws.header.kid == "2X9R4HXF34")
        #expect(jws.header.typ == "JWT")
        #expect(jws.header.x5c == nil)
    }

    @Test("the claims are iss, iat, exp, aud appstoreconnect-v1 and bid, and nothing else")
    func claims() throws {
        let jws = try CompactJWS(try Self.token().make(issuedAt: Self.issuedAt, lifetime: .seconds(1200)))
        let claims = try Self.claims(jws)
        #expect(Set(claims.keys) == ["iss", "iat", "exp", "aud", "bid"])
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_748_736_000)  // whole seconds, rounded down
        #expect((claims["exp"] as? NSNumber)?.int64Value == 1_748_737_200)
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.storesync")
    }

    @Test("the default lifetime is the 60-minute maximum")
    func defaultLifetime() throws {
        let claims = try Self.claims(CompactJWS(try Self.token().make(issuedAt: Self.issuedAt)))
        let iat = try #require((claims["iat"] as? NSNumber)?.int64Value)
        #expect((claims["exp"] as? NSNumber)?.int64Value == iat + 3600)
        #expect(AppStoreAPIToken.maximumLifetime == .seconds(3600))
    }

    @Test("the token verifies with the key's public key, and not with another key")
    func verifies() throws {
        let jws = try CompactJWS(try Self.token().make(issuedAt: Self.issuedAt))
        #expect(jws.signature.count == 64)
        try jws.verify(.es256, with: Self.key.publicKey)
        let other = try PrivateKey.generate(.ecP256)
        let error = #expect(throws: CryptoError.self) { try jws.verify(.es256, with: other.publicKey) }
        #expect(error?.code == .badSignature)
    }

    @Test("a lifetime over 60 minutes, zero or negative is refused", arguments: [
        Duration.seconds(3601), .seconds(7200), .milliseconds(3_600_001), .zero, .seconds(-1),
    ])
    func lifetimeBounds(lifetime: Duration) throws {
        let error = #expect(throws: CryptoError.self) { try Self.token().make(issuedAt: Self.issuedAt, lifetime: lifetime) }
        #expect(error?.reason.contains("60 minutes") == true)
    }

    @Test("lifetimes up to exactly 60 minutes are accepted", arguments: [Duration.seconds(1), .seconds(1800), .seconds(3600)])
    func lifetimeAccepted(lifetime: Duration) throws {
        let claims = try Self.claims(CompactJWS(try Self.token().make(issuedAt: Self.issuedAt, lifetime: lifetime)))
        #expect((claims["exp"] as? NSNumber)?.int64Value == 1_748_736_000 + lifetime.components.seconds)
    }

    @Test("only an EC P-256 key is accepted", arguments: [KeyKind.rsa(bits: 2048), .ecP384])
    func wrongKeyKind(kind: KeyKind) throws {
        let key = try PrivateKey.generate(kind)
        let error = #expect(throws: CryptoError.self) {
            try AppStoreAPIToken(keyID: "K", issuerID: "I", bundleID: "B", privateKey: key)
        }
        #expect(error?.code == .invalidKey)
    }

    @Test("a .p8 key read from PEM signs tokens that verify with its public key")
    func p8Key() throws {
        let p8 = try PrivateKey(pem: Self.key.pem())
        let token = try AppStoreAPIToken(keyID: "K", issuerID: "I", bundleID: "B", privateKey: p8)
        try CompactJWS(try token.make(issuedAt: Self.issuedAt)).verify(.es256, with: Self.key.publicKey)
    }
}
