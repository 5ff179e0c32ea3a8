import Postgres

/// A connection as an operator may see it: every setting, with its private key only said to be there or not.
/// What `storesync connections list|show` prints, so that printing a connection never loads its key.
public struct ConnectionSettings: Sendable, Equatable {
    public let connection: StoreConnection
    public let apiKeyID: String?
    public let apiIssuerID: String?
    public let hasPrivateKey: Bool
    public let apiBaseURL: String?
    public let trustedRootsPEM: String?
    public let apiClientEmail: String?
    public let apiTokenURI: String?
    public let pushAudience: String?
    public let pushServiceAccount: String?
    public let pushJWKSURL: String?
    public let sandboxAPIBaseURL: String?

    private static let select = """
        SELECT \(StoreConnection.columns), api_key_id, api_issuer_id, api_private_key IS NOT NULL, api_base_url,
               trusted_roots_pem, api_client_email, api_token_uri, push_audience, push_service_account, push_jwks_url,
               sandbox_api_base_url
        FROM store_connections
        """

    /// One connection's settings, if it exists.
    public static func get(id: Int64, on db: isolated PostgresConnection) throws -> ConnectionSettings? {
        try db.query("\(select) WHERE id = $1", [id]).first.map(ConnectionSettings.init(row:))
    }

    /// Every connection's settings, by id.
    public static func list(on db: isolated PostgresConnection) throws -> [ConnectionSettings] {
        try db.query("\(select) ORDER BY id").map(ConnectionSettings.init(row:))
    }
}

extension ConnectionSettings {
    init(row: PostgresRow) throws {
        try self.init(connection: StoreConnection(row: row), apiKeyID: row.decodeOptional(10), apiIssuerID: row.decodeOptional(11),
                      hasPrivateKey: row.decode(12), apiBaseURL: row.decodeOptional(13), trustedRootsPEM: row.decodeOptional(14),
                      apiClientEmail: row.decodeOptional(15), apiTokenURI: row.decodeOptional(16),
                      pushAudience: row.decodeOptional(17), pushServiceAccount: row.decodeOptional(18),
                      pushJWKSURL: row.decodeOptional(19), sandboxAPIBaseURL: row.decodeOptional(20))
    }
}
