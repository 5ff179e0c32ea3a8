import Foundation
import Postgres

/// An account (tenant): SubscriptionFlow's customer, found by the host its API and webhooks are called on.
public struct Account: Sendable, Equatable {
    public let id: Int64
    public let host: String
    public let name: String
    public let createdAt: Date
    /// Mobile Stores API requests per minute its backends may make.
    public let apiRateLimit: Int
    /// App endpoint requests per minute one account token may make.
    public let appTokenRateLimit: Int
    /// Failed app authentications per minute one address may make.
    public let appAddressFailureLimit: Int
}

/// Finding and listing accounts, for the operator's commands.
public enum AccountDirectory {
    /// A new account for `host`, or nil when the host already has one (an operator adding twice is told so,
    /// rather than shown a constraint violation).
    public static func addIfAbsent(host: String, name: String, on db: isolated PostgresConnection) throws -> Int64? {
        try db.query("INSERT INTO accounts (host, name) VALUES ($1, $2) ON CONFLICT (host) DO NOTHING RETURNING id",
                     [host, name]).first.map { try $0.decode(0) }
    }

    /// Every account, oldest first.
    public static func list(on db: isolated PostgresConnection) throws -> [Account] {
        try db.query("""
            SELECT id, host, name, created_at, api_rate_limit, app_token_rate_limit, app_address_failure_limit
            FROM accounts ORDER BY id
            """).map { row in
            Account(id: try row.decode(0), host: try row.decode(1), name: try row.decode(2), createdAt: try row.decode(3),
                    apiRateLimit: try row.decode(4), appTokenRateLimit: try row.decode(5),
                    appAddressFailureLimit: try row.decode(6))
        }
    }

    /// Whether there is an account with this id.
    public static func exists(id: Int64, on db: isolated PostgresConnection) throws -> Bool {
        try !db.query("SELECT 1 FROM accounts WHERE id = $1", [id]).isEmpty
    }

    /// Sets the account's Mobile Stores API budget, requests per minute.
    public static func setAPIRateLimit(_ limit: Int, accountID: Int64, on db: isolated PostgresConnection) throws {
        _ = try db.query("UPDATE accounts SET api_rate_limit = $2 WHERE id = $1", [accountID, limit])
    }

    /// Sets the account's app endpoint limits, per minute; nil keeps a limit as it is.
    public static func setAppRateLimits(perToken: Int?, failuresPerAddress: Int?, accountID: Int64,
                                        on db: isolated PostgresConnection) throws {
        _ = try db.query("""
            UPDATE accounts SET app_token_rate_limit = COALESCE($2, app_token_rate_limit),
                                app_address_failure_limit = COALESCE($3, app_address_failure_limit)
            WHERE id = $1
            """, [accountID, perToken, failuresPerAddress])
    }

    /// The id of the account of `host`, if there is one.
    public static func id(host: String, on db: isolated PostgresConnection) throws -> Int64? {
        try db.query("SELECT id FROM accounts WHERE host = $1", [host]).first.map { try $0.decode(0) }
    }
}

/// Questions about an account's customers.
public enum Customers {
    /// Whether `customerID` is a customer of `accountID`: what every API read checks first, so a customer of
    /// another account is as unknown as one that does not exist.
    public static func exists(_ customerID: String, accountID: Int64) -> PostgresQuery<Bool> {
        PostgresQuery("SELECT 1 FROM customers WHERE id = $1::uuid AND account_id = $2", [customerID, accountID]) {
            !$0.isEmpty
        }
    }
}
