import Crypto
import Foundation
import StrictJSON

/// What a verified push token asserts: Google vouches that the push was sent, for this endpoint, by this
/// service account.
public struct PushTokenClaims: Sendable, Equatable {
    public let issuer: String
    public let audience: String
    public let email: String
    /// The service account's unique numeric id; `nil` only if Google ever omits it (no check depends on it).
    public let subject: String?
    public let issuedAt: Date
    public let expiresAt: Date
}

/// Authenticates Pub/Sub pushes by their `Authorization: Bearer` OIDC token, so only Google, pushing as the
/// configured service account to the configured endpoint, can feed notifications in.
///
/// Checks run in a fixed order and each failure has its own `PushTokenError.Code`: shape, algorithm (before
/// any key lookup, so a token cannot choose how it is checked), key, signature, then the claims. Claims
/// are only believed once the signature holds.
public struct PushTokenVerifier: Sendable {
    /// Longest `Authorization` value considered; Google's tokens are about 1 KiB.
    public static let maxAuthorizationLength = 8 * 1024
    /// Clock difference tolerated between Google and this host, for `exp` and `iat`.
    public static let allowedClockSkew: TimeInterval = 60
    /// The two spellings of Google's issuer that its ID tokens use.
    public static let googleIssuers: Set<String> = ["accounts.google.com", "https://accounts.google.com"]

    /// The audience set on the push subscription, compared exactly.
    public let audience: String
    /// The service account the subscription pushes as, compared exactly.
    public let serviceAccountEmail: String
    public let keys: GoogleKeyCache

    public init(audience: String, serviceAccountEmail: String, keys: GoogleKeyCache) {
        self.audience = audience
        self.serviceAccountEmail = serviceAccountEmail
        self.keys = keys
    }

    /// Verifies the value of a push's `Authorization` header (`Bearer <token>`, scheme case-insensitive).
    /// Throws `PushTokenError`; only `.keysUnavailable` is worth a retry.
    ///
    /// `exp` and `iat` are judged at `now`. For a push that was stored and is checked later, pass the time it
    /// was received: the token proves who sent the push when it arrived, and Google sends tokens up to an hour
    /// old, so judging them at the wall clock would turn a queue backlog or a retry into a permanent
    /// `.expired`. Signature, issuer, audience and email are checked on every call regardless.
    public func verify(authorization: String, now: Date = Date()) async throws -> PushTokenClaims {
        let token = try Self.bearerToken(authorization)
        let jws: CompactJWS
        do {
            jws = try CompactJWS(String(token), maxLength: Self.maxAuthorizationLength)
        } catch let error as CryptoError {
            throw PushTokenError(error.code == .unsupportedHeader ? .unsupportedHeader : .malformed,
                                 "not a compact JWS StoreSync reads: \(error.reason)")
        }
        let claims: RawClaims
        do {
            claims = try JSONReader.read(jws.payload, RawClaims.init(json:))
        } catch {
            throw PushTokenError(.malformed, "claims are not a JSON object with numeric exp and iat and string iss, aud, email "
                                 + "and sub: \(error)")
        }

        guard jws.header.alg == SignatureAlgorithm.rs256.rawValue else {
            throw PushTokenError(.unsupportedAlgorithm, "alg must be RS256, got \(Self.printable(jws.header.alg))")
        }
        guard let kid = jws.header.kid else { throw PushTokenError(.unknownKey, "header has no kid") }
        guard let key = try await keys.key(for: kid) else {
            throw PushTokenError(.unknownKey, "kid \(Self.printable(kid)) is not among Google's keys")
        }
        do {
            try jws.verify(.rs256, with: key)
        } catch let error as CryptoError {
            throw PushTokenError(.badSignature, "kid \(Self.printable(kid)): \(error.reason)")
        }

        guard let issuer = claims.iss, Self.googleIssuers.contains(issuer) else {
            throw PushTokenError(.wrongIssuer, "iss is \(claims.iss.map { "\"\($0)\"" } ?? "missing"), not Google's")
        }
        guard let tokenAudience = claims.aud, tokenAudience == audience else {
            throw PushTokenError(.wrongAudience, "aud is \(claims.aud.map { "\"\($0)\"" } ?? "missing"), expected \"\(audience)\"")
        }
        guard let email = claims.email, email == serviceAccountEmail else {
            throw PushTokenError(.wrongEmail,
                                 "email is \(claims.email.map { "\"\($0)\"" } ?? "missing"), expected \"\(serviceAccountEmail)\"")
        }
        guard claims.emailVerified == true else {
            throw PushTokenError(.emailNotVerified, "email_verified is not the boolean true")
        }
        let expiresAt = Date(timeIntervalSince1970: claims.exp)
        guard expiresAt.addingTimeInterval(Self.allowedClockSkew) >= now else {
            throw PushTokenError(.expired, "expired at \(expiresAt), now is \(now)")
        }
        let issuedAt = Date(timeIntervalSince1970: claims.iat)
        guard issuedAt <= now.addingTimeInterval(Self.allowedClockSkew) else {
            throw PushTokenError(.issuedInFuture, "issued at \(issuedAt), now is \(now)")
        }
        return PushTokenClaims(issuer: issuer, audience: tokenAudience, email: email, subject: claims.sub,
                               issuedAt: issuedAt, expiresAt: expiresAt)
    }

    private static func bearerToken(_ authorization: String) throws -> Substring {
        guard authorization.utf8.count <= maxAuthorizationLength else {
            throw PushTokenError(.malformed, "Authorization is \(authorization.utf8.count) bytes, more than the \(maxAuthorizationLength) allowed")
        }
        let value = authorization.drop(while: { $0 == " " || $0 == "\t" })
        guard let space = value.firstIndex(of: " "), value[..<space].lowercased() == "bearer" else {
            throw PushTokenError(.malformed, "Authorization is not a Bearer credential")
        }
        var token = value[space...].drop { $0 == " " }
        while token.last == " " || token.last == "\t" { token = token.dropLast() }
        // A JWS is ASCII without spaces; checking bytes, not Characters, keeps this off the hot path's profile.
        guard !token.isEmpty, !token.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f }) else {
            throw PushTokenError(.malformed, "Bearer credential is empty or contains whitespace")
        }
        return token
    }

    /// Header fields are read before the signature is checked, so they are attacker-chosen: echo them into
    /// messages (and so into logs) only when short and plain.
    private static func printable(_ field: String?) -> String {
        guard let field else { return "missing" }
        let plain = !field.isEmpty && field.utf8.count <= 64 && field.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        return plain ? "\"\(field)\"" : "(unprintable)"
    }
}

/// The claims as sent. Types are strict except `email_verified`, whose non-boolean values are kept as
/// "not verified" so they get that code rather than `malformed`. A repeated claim takes its last value: the
/// signature, checked before any claim is believed, covers the payload whole.
private struct RawClaims: JSONReadable {
    var iss: String?
    var aud: String?
    var email: String?
    var emailVerified: Bool?
    var exp: Double
    var iat: Double
    var sub: String?

    init(json reader: inout JSONReader) throws {
        var iss: String?, aud: String?, email: String?, emailVerified: Bool?, exp: Double?, iat: Double?, sub: String?
        try reader.readObject { reader, key in
            switch key {
            case "iss": iss = try reader.readString()
            case "aud": aud = try reader.readString()
            case "email": email = try reader.readString()
            case "email_verified" where try reader.peekKind() == .bool: emailVerified = try reader.readBool()
            case "email_verified":
                emailVerified = nil
                try reader.skipValue()
            case "exp": exp = try reader.readDouble()
            case "iat": iat = try reader.readDouble()
            case "sub": sub = try reader.readString()
            default: try reader.skipValue()
            }
        }
        guard let exp else { throw JSONReaderError(.missingField, "required claim", offset: 0, path: ["exp"]) }
        guard let iat else { throw JSONReaderError(.missingField, "required claim", offset: 0, path: ["iat"]) }
        (self.iss, self.aud, self.email, self.emailVerified, self.exp, self.iat, self.sub) =
            (iss, aud, email, emailVerified, exp, iat, sub)
    }
}
