import Accounts
import Crypto
import Foundation
import HTTP
import Logging
import Postgres

/// The customer an app request acts for: the one its account token stands for, never one a body names.
struct AppPrincipal: Sendable, Equatable {
    let accountID: Int64
    let customerID: String
    let token: String
}

/// What authenticating an app request established: who, the token's budget once charged, and the route's read.
struct AppAuthentication: Sendable {
    let principal: AppPrincipal
    let rate: RateLimiter.Status
    /// The route's read (`Access.app(read:)`), sent in the same round trip; nil when the route has none.
    let read: JSONValue?
}

/// Authenticates the app endpoints' `X-SF-Account-Token` / `X-SF-Client-Secret` pair. Every failure — a header
/// missing or malformed, a token unknown, revoked or of another tenant, a wrong secret — takes the same path
/// (one lookup, one hash, one constant-time comparison, one charge of the address's failure bucket) and
/// answers the same 401, so neither the body nor the time tells which it was. A right pair costs one round
/// trip: the lookup, the route's read and the token's charge go together, the charge last so the token's
/// window row is locked only until the commit. The pair is checked against the database every time, so a
/// revoked token stops at once.
struct AppAuthenticator: Sendable {
    static let invalid = APIError(401, "Invalid account token or client secret")
    /// Compared with when the token is unknown, so an unknown token costs the comparison a known one does.
    private static let absentDigest = Data(repeating: 0, count: 32)

    let pool: PostgresPool
    let clientAddresses: ClientAddressRule

    /// The authentication, or the 401 (429 once the address has failed too often, or the token's budget is
    /// spent) with the budget's headers.
    func authenticate(_ request: HTTPRequest, host: String, read: Access.AppRead?) async throws -> AppAuthentication {
        let headers = AppCredentialHeaders(request)
        let secret = headers.secret ?? ""
        let digest = Digest.sha256(Data(secret.utf8))
        let found: (AppCredentials?, JSONValue?, (hits: Int, resetsIn: Int)?)
        if let token = headers.token {
            let lookup = AppCredentials.lookup(host: host, token: token)
            let charge = RateLimiter.charge(appToken: token, host: host, secretSHA256: digest)
            if let read {
                found = try await pool.run { db in try db.query(lookup, read(token, host), charge) }
            } else {
                let (credentials, status) = try await pool.run { db in try db.query(lookup, charge) }
                found = (credentials, nil, status)
            }
        } else {
            found = (try await pool.query(AppCredentials.lookup(host: host, token: nil)), nil, nil)
        }
        let (credentials, readAnswer, charged) = found
        let matches = ConstantTime.equal(digest, credentials?.token?.secretSHA256 ?? Self.absentDigest)
        guard let credentials else { throw Self.invalid }
        if let token = headers.token, let held = credentials.token, held.active, matches, !secret.isEmpty, let charged {
            let rate = RateLimiter.Status(limit: credentials.tokenRateLimit, hits: charged.hits, resetsIn: charged.resetsIn)
            guard !rate.isLimited else {
                var limited = APIError.tooManyAttempts
                limited.headers += rate.headers
                throw limited
            }
            return AppAuthentication(principal: AppPrincipal(accountID: credentials.accountID, customerID: held.customerID,
                                                             token: token),
                                     rate: rate, read: readAnswer)
        }
        let status = try await pool.query(RateLimiter.charge(accountID: credentials.accountID,
                                                             bucket: Self.addressBucket(clientAddresses.clientAddress(of: request)),
                                                             limit: credentials.addressFailureLimit))
        var refusal = status.isLimited ? APIError.tooManyAttempts : Self.invalid
        refusal.headers += status.headers
        throw refusal
    }

    /// The bucket an address's failures count in.
    static func addressBucket(_ address: String?) -> String { "app-address:" + (address ?? "unknown") }
}
