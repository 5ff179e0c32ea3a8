import Accounts
import Crypto
import Foundation
import HTTP
import Postgres
import Synchronization

/// Finds the principal of a backend request's bearer token. Tokens are looked up by their SHA-256 (so the
/// comparison that decides is of hashes, not of the secret itself) together with the request's host: a token
/// of another tenant is as unknown as a made-up one. A principal found is kept for `cacheLifetime`, so a
/// revoked client's tokens stop within that long while a busy backend costs no lookup per request.
final class BearerAuthenticator: Sendable {
    static let cacheLifetime: Duration = .seconds(2)
    /// Tokens StoreSync issues are 48 characters; anything far longer is not one.
    static let maxTokenLength = 512
    private static let maxCached = 10_000

    private struct Entry {
        let principal: APIPrincipal
        let host: String
        let fetchedAt: ContinuousClock.Instant
    }

    private let pool: PostgresPool
    private let cache = Mutex<[Data: Entry]>([:])

    init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The principal, or `APIError.unauthenticated` for a missing, malformed, expired, revoked or other
    /// tenant's token.
    func authenticate(_ request: HTTPRequest, host: String) async throws -> APIPrincipal {
        guard let header = request.header("authorization"), let token = Self.bearerToken(header) else {
            throw APIError.unauthenticated
        }
        let digest = Digest.sha256(Data(token.utf8))
        let now = ContinuousClock.now
        let cached = cache.withLock { cache in
            cache[digest].flatMap { $0.host == host && now - $0.fetchedAt < Self.cacheLifetime ? $0.principal : nil }
        }
        if let cached, cached.expiresAt > Date() { return cached }
        guard let principal = try await pool.query(APIAccessTokens.principal(tokenSHA256: digest, host: host)) else {
            cache.withLock { _ = $0.removeValue(forKey: digest) }
            throw APIError.unauthenticated
        }
        cache.withLock { cache in
            if cache.count >= Self.maxCached { cache.removeAll(keepingCapacity: true) }
            cache[digest] = Entry(principal: principal, host: host, fetchedAt: now)
        }
        return principal
    }

    /// The token of `Authorization: Bearer <token>` (RFC 6750 §2.1; the scheme is case-insensitive), when it
    /// is a token68 of sensible length.
    static func bearerToken(_ header: String) -> String? {
        let parts = header.trimmingHTTPWhitespace.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return VisibleASCII.bounded(parts[1], maxLength: maxTokenLength)
    }
}
