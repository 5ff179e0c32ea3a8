import Crypto
import Foundation
import GooglePlay
import Testing

/// Guards `ServiceAccountAssertion`: the JWT a service account trades for a Play Developer API access
/// token must be RS256 over exactly iss/scope/aud/iat/exp, live at most an hour, and verify with the
/// service account's public key.
@Suite("Service-account assertion")
struct ServiceAccountAssertionTests {
    struct Claims: Decodable, Equatable {
        let iss: String
        let scope: String
        let aud: String
        let iat: Int
        let exp: Int
    }

    static let email = "play-api@storesync-prod.iam.gserviceaccount.com"
    static let now = Date(timeIntervalSince1970: 1_800_000_000.75)

    @Test("the assertion verifies with the public key and carries the expected header and claims")
    func roundTrip() throws {
        let token = try ServiceAccountAssertion.make(clientEmail: Self.email, privateKey: TestKeys.a, now: Self.now,
                                                     keyID: "0123456789abcdef")
        let jws = try CompactJWS(token)
        try jws.verify(.rs256, with: TestKeys.a.publicKey)
        #expect(jws.header.alg == "RS256")
        #expect(jws.header.kid == "0123456789abcdef")
        #expect(jws.header.typ == "JWT")
        #expect(jws.header.x5c == nil)
        let claims = try JSONDecoder().decode(Claims.self, from: jws.payload)
        #expect(claims == Claims(iss: Self.email, scope: "https://www.googleapis.com/auth/androidpublisher",
                                 aud: "https://oauth2.googleapis.com/token", iat: 1_800_000_000, exp: 1_800_003_600))
        let keys = try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any]
        #expect(keys.map { Set($0.keys) } == ["iss", "scope", "aud", "iat", "exp"])
    }

    @Test("another key does not verify the assertion")
    func otherKey() throws {
        let token = try ServiceAccountAssertion.make(clientEmail: Self.email, privateKey: TestKeys.a, now: Self.now)
        #expect(throws: CryptoError(.badSignature, "")) { try CompactJWS(token).verify(.rs256, with: TestKeys.b.publicKey) }
    }

    @Test("a key loaded from the key file's PEM signs, and kid, scope, token URI and lifetime are as given")
    func customFields() throws {
        let key = try PrivateKey(pem: TestKeys.b.pem())
        let token = try ServiceAccountAssertion.make(clientEmail: Self.email, privateKey: key,
                                                     scope: "https://www.googleapis.com/auth/pubsub",
                                                     tokenURI: "http://127.0.0.1:8089/token", now: Self.now,
                                                     lifetime: .seconds(1800))
        let jws = try CompactJWS(token)
        try jws.verify(.rs256, with: TestKeys.b.publicKey)
        #expect(jws.header.kid == nil)
        let claims = try JSONDecoder().decode(Claims.self, from: jws.payload)
        #expect(claims == Claims(iss: Self.email, scope: "https://www.googleapis.com/auth/pubsub",
                                 aud: "http://127.0.0.1:8089/token", iat: 1_800_000_000, exp: 1_800_001_800))
    }

    @Test("a lifetime outside 1 s…1 h is refused", arguments: [
        Duration.seconds(3601), .seconds(7200), .zero, .milliseconds(500), .seconds(-60),
    ])
    func lifetime(lifetime: Duration) throws {
        let error = #expect(throws: ServiceAccountAssertionError.self) {
            try ServiceAccountAssertion.make(clientEmail: Self.email, privateKey: TestKeys.a, now: Self.now, lifetime: lifetime)
        }
        #expect(error?.code == .invalidLifetime)
    }

    @Test("empty fields are refused", arguments: [("", "s", "t"), ("e", "", "t"), ("e", "s", "")] as [(String, String, String)])
    func emptyFields(email: String, scope: String, tokenURI: String) throws {
        let error = #expect(throws: ServiceAccountAssertionError.self) {
            try ServiceAccountAssertion.make(clientEmail: email, privateKey: TestKeys.a, scope: scope, tokenURI: tokenURI)
        }
        #expect(error?.code == .missingField)
    }

    @Test("an EC key cannot sign an RS256 assertion")
    func ecKey() throws {
        let key = try PrivateKey.generate(.ecP256)
        #expect(throws: CryptoError(.invalidKey, "")) {
            try ServiceAccountAssertion.make(clientEmail: Self.email, privateKey: key)
        }
    }
}
