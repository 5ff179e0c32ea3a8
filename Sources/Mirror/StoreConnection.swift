import Foundation
import Postgres
import StoreModel

/// One app on one store in one environment, as configured by the account. It decides which purchases are
/// mirrored (environment), how they link (token policy), where their products map, and how StoreSync talks
/// to the store's API.
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
    public let apiKeyID: String?
    public let apiIssuerID: String?
    /// The API private key (PEM). Never logged or printed.
    public let apiPrivateKeyPEM: String?
    public let apiBaseURL: String?
    /// Roots trusted instead of the store's real root (a simulator); `nil` for the real one.
    public let trustedRootsPEM: String?
    /// Google: the service account the Play Developer API is called as, and its OAuth token endpoint.
    public let apiClientEmail: String?
    public let apiTokenURI: String?
    /// Google: what a Pub/Sub push's OIDC token must say (`aud`, `email`) and where its signing keys are.
    public let pushAudience: String?
    public let pushServiceAccount: String?
    public let pushJWKSURL: String?

    static let columns = """
        id, account_id, store, app_identifier, app_apple_id, environment, require_issued_tokens,
        answer_consumption_requests, consumption_refund_preference, api_key_id, api_issuer_id, api_private_key,
        api_base_url, trusted_roots_pem, api_client_email, api_token_uri, push_audience, push_service_account,
        push_jwks_url
        """

    init(row: PostgresRow) throws {
        id = try row.decode(0)
        accountID = try row.decode(1)
        let storeName: String = try row.decode(2)
        guard let store = Store(rawValue: storeName) else { throw MirrorError(.unknownConnection, "unknown store \(storeName)") }
        self.store = store
        appIdentifier = try row.decode(3)
        appAppleID = try row.decodeOptional(4)
        let environmentName: String = try row.decode(5)
        guard let environment = StoreEnvironment(rawValue: environmentName) else {
            throw MirrorError(.unknownConnection, "unknown environment \(environmentName)")
        }
        self.environment = environment
        requireIssuedTokens = try row.decode(6)
        answerConsumptionRequests = try row.decode(7)
        consumptionRefundPreference = try row.decodeOptional(8)
        apiKeyID = try row.decodeOptional(9)
        apiIssuerID = try row.decodeOptional(10)
        apiPrivateKeyPEM = try row.decodeOptional(11)
        apiBaseURL = try row.decodeOptional(12)
        trustedRootsPEM = try row.decodeOptional(13)
        apiClientEmail = try row.decodeOptional(14)
        apiTokenURI = try row.decodeOptional(15)
        pushAudience = try row.decodeOptional(16)
        pushServiceAccount = try row.decodeOptional(17)
        pushJWKSURL = try row.decodeOptional(18)
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

    public static func get(id: Int64, on connection: isolated PostgresConnection) throws -> StoreConnection? {
        try connection.query("SELECT \(StoreConnection.columns) FROM store_connections WHERE id = $1", [id])
            .first.map(StoreConnection.init(row:))
    }

    public static func list(on connection: isolated PostgresConnection) throws -> [StoreConnection] {
        try connection.query("SELECT \(StoreConnection.columns) FROM store_connections ORDER BY id")
            .map(StoreConnection.init(row:))
    }
}
