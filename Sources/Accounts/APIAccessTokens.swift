import Foundation
import Postgres

/// Who an API access token speaks for: one client of one account, with the scopes it was granted.
public struct APIPrincipal: Sendable, Equatable {
    public let clientID: String
    public let accountID: Int64
    public let scopes: [String]
    /// The account's REST budget, requests per minute (`accounts.api_rate_limit`).
    public let rateLimit: Int
    public let expiresAt: Date
}

/// The client-credentials grant (RFC 6749 §4.4): a client's secret is exchanged for a bearer token that
/// expires. Tokens are opaque and kept only as their SHA-256, like every secret StoreSync hands out.
public enum APIAccessTokens {
    /// How long a token lives unless the caller says otherwise: long enough for a backend to cache it, short
    /// enough that a leaked one is soon useless.
    public static let defaultLifetime: Duration = .seconds(3600)

    /// A token just issued, shown this once.
    public struct Issued: Sendable {
        public let token: String
        public let scopes: [String]
        public let expiresIn: Int
    }

    /// Why a grant was refused, in RFC 6749 §5.2's terms.
    public enum Refusal: Error, Sendable, Equatable {
        /// Unknown client, wrong secret, revoked client, or a client of another account.
        case invalidClient
        /// A requested scope the client was not given.
        case invalidScope(String)
    }

    /// Issues a token for the client `clientID` of the account of `host`, when `secret` is its secret; with
    /// `requestedScopes` nil the token carries every scope of the client. `sha256` is the Crypto adapter's
    /// digest, injected so this module stays free of C. The secret's hash is compared in constant time; an
    /// unknown client costs the same hash and comparison, so timing does not tell the two apart.
    public static func issue(clientID: String, secret: String, host: String, requestedScopes: [String]?,
                             lifetime: Duration = defaultLifetime, sha256: @Sendable (Data) -> Data,
                             on db: isolated PostgresConnection) throws -> Result<Issued, Refusal> {
        let given = sha256(Data(secret.utf8))
        let row = UUID(uuidString: clientID) == nil ? nil : try db.query("""
            SELECT c.account_id, c.secret_sha256, array_to_string(c.scopes, ' ')
            FROM api_clients c JOIN accounts a ON a.id = c.account_id
            WHERE c.id = $1::uuid AND a.host = $2 AND c.revoked_at IS NULL
            """, [clientID, host]).first
        let stored: Data = try row?.decode(1) ?? Data(repeating: 0, count: 32)
        guard ConstantTime.equal(given, stored), let row else { return .failure(.invalidClient) }
        let accountID: Int64 = try row.decode(0)
        let granted = try row.decode(2, as: String.self).split(separator: " ").map(String.init)
        var scopes = granted
        if let requestedScopes {
            if let missing = requestedScopes.first(where: { !granted.contains($0) }) { return .failure(.invalidScope(missing)) }
            var seen = Set<String>()
            scopes = requestedScopes.filter { seen.insert($0).inserted }
        }
        let token = Secrets.random()
        let seconds = Int(lifetime.components.seconds)
        // The client's tokens expired a day ago or more go as a new one comes, so the table holds about a day
        // of each client's tokens however long it runs.
        _ = try db.query("DELETE FROM api_access_tokens WHERE client_id = $1::uuid AND expires_at < now() - interval '1 day'",
                         [clientID])
        _ = try db.query("""
            INSERT INTO api_access_tokens (token_sha256, client_id, account_id, scopes, expires_at)
            VALUES ($1::bytea, $2::uuid, $3, $4::text[], now() + make_interval(secs => $5))
            """, [sha256(Data(token.utf8)), clientID, accountID, PostgresArray(scopes), seconds])
        return .success(Issued(token: token, scopes: scopes, expiresIn: seconds))
    }

    /// The principal of the token whose SHA-256 is `tokenSHA256`, if it is unexpired, its client unrevoked,
    /// and its account the one of `host` — a token of another tenant authenticates nothing here.
    public static func principal(tokenSHA256: Data, host: String) -> PostgresQuery<APIPrincipal?> {
        PostgresQuery("""
            SELECT t.client_id::text, t.account_id, array_to_string(t.scopes, ' '), a.api_rate_limit, t.expires_at
            FROM api_access_tokens t
            JOIN api_clients c ON c.id = t.client_id AND c.revoked_at IS NULL
            JOIN accounts a ON a.id = t.account_id AND a.host = $2
            WHERE t.token_sha256 = $1::bytea AND t.expires_at > now()
            """, [tokenSHA256, host]) { rows in
            try rows.first.map { row in
                APIPrincipal(clientID: try row.decode(0), accountID: try row.decode(1),
                             scopes: try row.decode(2, as: String.self).split(separator: " ").map(String.init),
                             rateLimit: try row.decode(3), expiresAt: try row.decode(4))
            }
        }
    }
}

/// Comparing secrets (their hashes) without an early exit, so how long a comparison takes does not tell an
/// attacker how much of a guess was right.
public enum ConstantTime {
    public static func equal(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
