import Accounts
import Crypto
import Foundation
import HTTP
import Postgres

/// The customer an app request acts for: the one its account token stands for, never one a body names.
struct AppPrincipal: Sendable, Equatable {
    let accountID: Int64
    let customerID: String
    let token: String
    /// Requests per minute the token may make.
    let rateLimit: Int
}

/// Authenticates the app endpoints' `X-SF-Account-Token` / `X-SF-Client-Secret` pair. Every failure — a header
/// missing or malformed, a token unknown, revoked or of another tenant, a wrong secret — takes the same path
/// (one lookup, one hash, one constant-time comparison, one charge of the address's failure bucket) and
/// answers the same 401, so neither the body nor the time tells which it was.
struct AppAuthenticator: Sendable {
    static let invalid = APIError(401, "Invalid account token or client secret")
    /// Compared with when the token is unknown, so an unknown token costs the comparison a known one does.
    private static let absentDigest = Data(repeating: 0, count: 32)

    let pool: PostgresPool

    /// The principal, or the 401 (429 once the address has failed too often) with the address bucket's headers.
    func authenticate(_ request: HTTPRequest, host: String) async throws -> AppPrincipal {
        let headers = AppCredentialHeaders(request)
        let token = headers.token
        let secret = headers.secret ?? ""
        let credentials = try await pool.query(AppCredentials.lookup(host: host, token: token))
        let digest = Digest.sha256(Data(secret.utf8))
        let matches = ConstantTime.equal(digest, credentials?.token?.secretSHA256 ?? Self.absentDigest)
        guard let credentials else { throw Self.invalid }
        if let token, let held = credentials.token, held.active, matches, !secret.isEmpty {
            return AppPrincipal(accountID: credentials.accountID, customerID: held.customerID, token: token,
                                rateLimit: credentials.tokenRateLimit)
        }
        let status = try await pool.query(RateLimiter.charge(accountID: credentials.accountID,
                                                             bucket: Self.addressBucket(request.peerAddress),
                                                             limit: credentials.addressFailureLimit))
        var refusal = status.isLimited ? APIError.tooManyAttempts : Self.invalid
        refusal.headers += status.headers
        throw refusal
    }

    /// The bucket an address's failures count in.
    static func addressBucket(_ address: String?) -> String { "app-address:" + (address ?? "unknown") }

    /// The bucket a token's requests count in.
    static func tokenBucket(_ token: String) -> String { "app-token:" + token }
}
