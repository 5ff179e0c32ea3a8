import Postgres
import StoreModel

/// What a store connection trusts, and nothing it signs with: the columns that verifying a notification at
/// receipt needs (roots, bundle id and App Apple ID, push audience and account). Ingest reads only these,
/// and its database role can read no other column of `store_connections`, so the process facing the
/// internet never holds a store API key.
public struct ConnectionTrust: Sendable, Equatable {
    public let id: Int64
    public let store: Store
    public let appIdentifier: String
    public let appAppleID: Int64?
    public let environment: StoreEnvironment
    public let trustedRootsPEM: String?
    public let pushAudience: String?
    public let pushServiceAccount: String?
    public let pushJWKSURL: String?
}

/// An account found by its host, with what each of its connections trusts.
public struct HostTrust: Sendable, Equatable {
    public let accountID: Int64
    /// Ordered by store, app and environment (Production before Sandbox).
    public let connections: [ConnectionTrust]

    /// The connections of one app on one store, Production first.
    public func connections(store: Store, appIdentifier: String) -> [ConnectionTrust] {
        connections.filter { $0.store == store && $0.appIdentifier == appIdentifier }
    }

    /// The account of `host` and its connections' trust, or nil for a host no account has.
    public static func loading(host: String) -> PostgresQuery<HostTrust?> {
        loading(where: "a.host = $1", host)
    }

    /// Account `accountID` and its connections' trust, or nil when there is no such account: how a stored
    /// notification, which names its account, is judged again later.
    public static func loading(accountID: Int64) -> PostgresQuery<HostTrust?> {
        loading(where: "a.id = $1", accountID)
    }

    private static func loading(where condition: String, _ key: any PostgresEncodable) -> PostgresQuery<HostTrust?> {
        PostgresQuery("""
            SELECT a.id, c.id, c.store, c.app_identifier, c.app_apple_id, c.environment, c.trusted_roots_pem,
                   c.push_audience, c.push_service_account, c.push_jwks_url
            FROM accounts a LEFT JOIN store_connections c ON c.account_id = a.id
            WHERE \(condition) ORDER BY c.store, c.app_identifier, c.environment
            """, [key]) { rows in
            guard let first = rows.first else { return nil }
            let connections = try rows.compactMap { row -> ConnectionTrust? in
                guard let id: Int64 = try row.decodeOptional(1) else { return nil }
                let (store, environment) = try StoreConnection.kind(id: id, store: row.decode(2), environment: row.decode(5))
                return ConnectionTrust(id: id, store: store, appIdentifier: try row.decode(3), appAppleID: try row.decodeOptional(4),
                                       environment: environment, trustedRootsPEM: try row.decodeOptional(6),
                                       pushAudience: try row.decodeOptional(7), pushServiceAccount: try row.decodeOptional(8),
                                       pushJWKSURL: try row.decodeOptional(9))
            }
            return HostTrust(accountID: try first.decode(0), connections: connections)
        }
    }
}
