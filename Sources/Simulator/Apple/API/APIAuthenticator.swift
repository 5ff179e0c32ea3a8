import Crypto
import Foundation
import HTTP

/// Checks a server-API request's `Authorization: Bearer <JWT>` as Apple does: ES256, signed with the API
/// key of the app the `bid` claim names (`kid` and `iss` must be that key's), `aud` `appstoreconnect-v1`,
/// not expired, and living at most 60 minutes (`exp - iat ≤ 3600`). Times are the wall clock's, since the
/// caller signs tokens with its own clock.
struct APIAuthenticator: Sendable {
    static let maxTokenLength = 8 * 1024
    static let audience = "appstoreconnect-v1"
    /// Tolerated difference between the caller's clock and ours for `iat`.
    static let clockSkew: Int64 = 60

    let apps: [String: SimulatedApp]
    /// Tokens already accepted, until they expire: a client reuses its token for many requests (StoreSync
    /// for up to an hour), and verifying its signature on each cost as much as signing the answer.
    private let accepted = Locked<[String: Accepted]>([:])
    private static let acceptedLimit = 1024

    init(apps: [String: SimulatedApp]) {
        self.apps = apps
    }

    private struct Accepted {
        let bundleID: String
        let expires: Int64
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private struct Claims: Decodable {
        let iss: String?
        let iat: Int64?
        let exp: Int64?
        let aud: String?
        let bid: String?
    }

    /// The app the token is for, or why it is refused.
    func authenticate(_ authorization: String?, now: Date) -> Result<SimulatedApp, Failure> {
        guard let authorization else { return .failure(Failure("no Authorization header")) }
        guard authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            return .failure(Failure("Authorization is not a Bearer token"))
        }
        let token = authorization.dropFirst(7).trimmingHTTPWhitespace
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        if let known = accepted.withLock({ $0[token] }), known.expires > seconds, let app = apps[known.bundleID] {
            return .success(app)
        }
        let jws: CompactJWS
        let claims: Claims
        do {
            jws = try CompactJWS(token, maxLength: Self.maxTokenLength)
            claims = try JSONDecoder().decode(Claims.self, from: jws.payload)
        } catch let error as CryptoError {
            return .failure(Failure("token is not a compact JWS: \(error.reason)"))
        } catch {
            return .failure(Failure("token claims are not a JSON object of the expected shape"))
        }
        guard let bundleID = claims.bid, let app = apps[bundleID] else {
            return .failure(Failure("bid \(claims.bid ?? "missing") is not an app of this App Store"))
        }
        guard jws.header.kid == app.apiKey.keyID else {
            return .failure(Failure("kid \(jws.header.kid ?? "missing") is not the API key of \(bundleID)"))
        }
        do {
            try jws.verify(.es256, with: app.apiKey.publicKey)
        } catch let error as CryptoError {
            return .failure(Failure("signature: \(error.reason)"))
        } catch {
            return .failure(Failure("signature: \(error)"))
        }
        guard claims.iss == app.apiKey.issuerID else {
            return .failure(Failure("iss \(claims.iss ?? "missing") is not the issuer of key \(app.apiKey.keyID)"))
        }
        guard claims.aud == Self.audience else {
            return .failure(Failure("aud \(claims.aud ?? "missing") is not \(Self.audience)"))
        }
        guard let issuedAt = claims.iat, let expires = claims.exp else {
            return .failure(Failure("iat and exp are required"))
        }
        guard expires > seconds else { return .failure(Failure("token expired at \(expires), now is \(seconds)")) }
        guard issuedAt <= seconds + Self.clockSkew else { return .failure(Failure("token issued in the future (iat \(issuedAt))")) }
        guard expires - issuedAt <= 3600 else {
            return .failure(Failure("token lives \(expires - issuedAt) s; at most 3600 s are allowed"))
        }
        accepted.withLock { accepted in
            if accepted.count >= Self.acceptedLimit { accepted.removeAll() }
            accepted[token] = Accepted(bundleID: bundleID, expires: expires)
        }
        return .success(app)
    }
}
