import Foundation
import Postgres
import StoreModel

/// One app on one store in one environment, as configured by the account: which purchases are mirrored
/// (environment), how they link (token policy), whether consumption requests are answered. It holds nothing
/// StoreSync signs or authenticates with — those are `StoreCredentials`, which only the store clients load —
/// so a connection can travel through the mirror, the logs and the API without carrying a private key.
public struct StoreConnection: Sendable, Equatable {
    public let id: Int64
    public let accountID: Int64
    public let store: Store
    /// Apple bundle id, Google package name.
    public let appIdentifier: String
    public let appAppleID: Int64?
    public let environment: StoreEnvironment
    public let requireIssuedTokens: Bool
    public let answerConsumptionRequests: Bool
    public let consumptionRefundPreference: String?
    /// Bumped by the database on every change of the connection's row: a store client built from older
    /// credentials knows to load them again without reading them on every job.
    public let settingsRevision: Int64

    static let columns = """
        id, account_id, store, app_identifier, app_apple_id, environment, require_issued_tokens,
        answer_consumption_requests, consumption_refund_preference, settings_revision
        """

    init(row: PostgresRow) throws {
        id = try row.decode(0)
        accountID = try row.decode(1)
        (store, environment) = try Self.kind(id: id, store: row.decode(2), environment: row.decode(5))
        appIdentifier = try row.decode(3)
        appAppleID = try row.decodeOptional(4)
        requireIssuedTokens = try row.decode(6)
        answerConsumptionRequests = try row.decode(7)
        consumptionRefundPreference = try row.decodeOptional(8)
        settingsRevision = try row.decode(9)
    }

    /// A row's store and environment, refused by name when this build does not know them.
    static func kind(id: Int64, store: String, environment: String) throws -> (Store, StoreEnvironment) {
        guard let known = Store(rawValue: store), let env = StoreEnvironment(rawValue: environment) else {
            throw AccountsError(.unknownConnection, "connection \(id) has store \(store), environment \(environment)")
        }
        return (known, env)
    }
}

/// Reading store connections.
public enum StoreConnections {
    /// The account's connections for an app on a store: at most one per environment.
    public static func find(accountID: Int64, store: Store, appIdentifier: String,
                            on connection: isolated PostgresConnection) throws -> [StoreConnection] {
        try connection.query(finding(accountID: accountID, store: store, appIdentifier: appIdentifier))
    }

    /// `find` as a query, to send with others in one round trip.
    public static func finding(accountID: Int64, store: Store, appIdentifier: String) -> PostgresQuery<[StoreConnection]> {
        PostgresQuery("""
            SELECT \(StoreConnection.columns) FROM store_connections
            WHERE account_id = $1 AND store = $2 AND app_identifier = $3 ORDER BY environment
            """, [accountID, store.rawValue, appIdentifier]) { try $0.map(StoreConnection.init(row:)) }
    }

    /// The account's connections on a store, every app and environment, by app then environment.
    public static func of(accountID: Int64, store: Store) -> PostgresQuery<[StoreConnection]> {
        PostgresQuery("""
            SELECT \(StoreConnection.columns) FROM store_connections
            WHERE account_id = $1 AND store = $2 ORDER BY app_identifier, environment
            """, [accountID, store.rawValue]) { try $0.map(StoreConnection.init(row:)) }
    }

    public static func get(id: Int64, on connection: isolated PostgresConnection) throws -> StoreConnection? {
        try connection.query("SELECT \(StoreConnection.columns) FROM store_connections WHERE id = $1", [id])
            .first.map(StoreConnection.init(row:))
    }

    public static func list(on connection: isolated PostgresConnection) throws -> [StoreConnection] {
        try connection.query("SELECT \(StoreConnection.columns) FROM store_connections ORDER BY id")
            .map(StoreConnection.init(row:))
    }
}
