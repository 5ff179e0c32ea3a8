import Foundation
import Postgres

/// What the app endpoints know of a host and an account token before deciding whether the pair the app sent
/// authenticates: the host's account with its app limits, and the token's customer, secret hash and state
/// where the account has that token. The account is found even when the token is not, so that a wrong pair
/// is counted against its address in the right account.
public struct AppCredentials: Sendable, Equatable {
    public struct Token: Sendable, Equatable {
        public let customerID: String
        public let secretSHA256: Data
        public let active: Bool
    }

    public let accountID: Int64
    /// Requests per minute one token may make (`accounts.app_token_rate_limit`).
    public let tokenRateLimit: Int
    /// Failed authentications per minute one address may make (`accounts.app_address_failure_limit`).
    public let addressFailureLimit: Int
    public let token: Token?

    /// The host's account and, when `token` is a token of it (active or revoked), that token; nil when no
    /// account has the host. `token` nil asks for the account alone, in the same statement, so a malformed
    /// token costs the database what a well-formed unknown one does.
    public static func lookup(host: String, token: String?) -> PostgresQuery<AppCredentials?> {
        PostgresQuery("""
            SELECT a.id, a.app_token_rate_limit, a.app_address_failure_limit, t.customer_id::text, t.secret_sha256,
                   t.status = 'active'
            FROM accounts a
            LEFT JOIN account_tokens t ON t.account_id = a.id AND t.token = $2::uuid
            WHERE a.host = $1
            """, [host, token]) { rows in
            try rows.first.map { row in
                let customerID: String? = try row.decodeOptional(3)
                return AppCredentials(
                    accountID: try row.decode(0), tokenRateLimit: try row.decode(1), addressFailureLimit: try row.decode(2),
                    token: try customerID.map { Token(customerID: $0, secretSHA256: try row.decode(4), active: try row.decode(5)) })
            }
        }
    }
}
