import Crypto
import Foundation
import HTTP

/// The simulator's stand-in for Google's OIDC signing keys: the key set `GET /oauth2/v3/certs` publishes and
/// the push tokens signed with the newest key. Rotation adds a key (keeping up to two older ones published,
/// as Google overlaps its keys) or replaces them all, so verifiers' caching and refetching can be exercised.
final class PushKeyRing: Sendable {
    struct SigningKey: Sendable {
        let kid: String
        let key: PrivateKey
    }

    static let issuer = "https://accounts.google.com"
    static let tokenLifetime: Int64 = 3600
    private static let maxPublished = 3

    /// Oldest first; the last one signs.
    private let keys: Locked<[SigningKey]>

    init(initial: PrivateKey) throws {
        keys = Locked([SigningKey(kid: try Self.kid(for: initial), key: initial)])
    }

    /// Google's kids are 40 hex digits; these are the first 20 bytes of the modulus's SHA-256.
    static func kid(for key: PrivateKey) throws -> String {
        let (modulus, _) = try key.publicKey.rsaComponents()
        return Hex.encode(Digest.sha256(modulus).prefix(20))
    }

    var publishedKeyIDs: [String] { keys.withLock { $0.map(\.kid) } }

    var current: SigningKey { keys.withLock { $0[$0.count - 1] } }

    /// Makes `key` the signing key; the previous ones stay published (up to two) unless `keepPrevious` is false.
    func rotate(to key: PrivateKey, keepPrevious: Bool) throws -> String {
        guard case .rsa(let bits) = key.kind, bits >= 2048 else {
            throw SimulatorError(.invalidArgument, "a push signing key must be RSA of at least 2048 bits")
        }
        let next = SigningKey(kid: try Self.kid(for: key), key: key)
        keys.withLock { keys in
            keys = keepPrevious ? Array((keys.filter { $0.kid != next.kid } + [next]).suffix(Self.maxPublished)) : [next]
        }
        return next.kid
    }

    /// The JWKS document: `{"keys": [{kty, kid, use, alg, n, e}, …]}`, newest first as Google lists them.
    func jwks() throws -> Data {
        let entries = try keys.withLock { $0 }.reversed().map { try $0.key.publicKey.jwk(kid: $0.kid) }
        return try JSONBody.encode(["keys": entries])
    }

    /// The `Authorization` value of one push to `target`: a fresh RS256 OIDC token on the wall clock (the
    /// receiver checks it against its own clock), or the bad token `fault` asks for; `nil` for a missing one.
    func authorization(for target: PlayPushTarget, fault: PushTokenFault?, now: Date = Date()) throws -> String? {
        var issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        if fault == .expired { issuedAt -= 2 * Self.tokenLifetime }
        let claims: [String: Any] = [
            "iss": fault == .wrongIssuer ? "https://accounts.example.com" : Self.issuer,
            "aud": fault == .wrongAudience ? target.audience + "/elsewhere" : target.audience,
            "azp": target.serviceAccountID, "sub": target.serviceAccountID,
            "email": fault == .wrongEmail ? "someone-else@attacker.example.iam.gserviceaccount.com" : target.serviceAccountEmail,
            "email_verified": fault != .emailNotVerified, "iat": issuedAt, "exp": issuedAt + Self.tokenLifetime,
        ]
        let signing = current
        switch fault {
        case .missing?:
            return nil
        case .unknownKey?:
            return "Bearer " + (try CompactJWS.sign(payload: try JSONBody.encode(claims), algorithm: .rs256, key: signing.key,
                                                    kid: String(repeating: "0", count: 40), typ: "JWT"))
        case .tamperedSignature?:
            let token = try CompactJWS.sign(payload: try JSONBody.encode(claims), algorithm: .rs256, key: signing.key,
                                            kid: signing.kid, typ: "JWT")
            let dot = token.lastIndex(of: ".")!
            var signature = [UInt8](try Base64URL.decode(token[token.index(after: dot)...]))
            signature[signature.count - 1] ^= 0x01
            return "Bearer " + token[...dot] + Base64URL.encode(signature)
        default:
            return "Bearer " + (try CompactJWS.sign(payload: try JSONBody.encode(claims), algorithm: .rs256, key: signing.key,
                                                    kid: signing.kid, typ: "JWT"))
        }
    }
}
