import Postgres

/// How StoreSync calls the App Store Server API for a connection and which roots its signed data must chain
/// to. Loaded only by the Apple store client's builder; never logged or printed.
public struct AppleCredentials: Sendable, Equatable {
    public let keyID: String?
    public let issuerID: String?
    /// The API private key (PEM).
    public let privateKeyPEM: String?
    public let baseURL: String?
    /// Where a Production connection's purchase unknown to Production is looked up (nil: Apple's sandbox host).
    public let sandboxBaseURL: String?
    /// Roots trusted instead of Apple's real root (a simulator); `nil` for the real one.
    public let trustedRootsPEM: String?
}

/// How StoreSync calls the Play Developer API for a connection (its service account) and authenticates the
/// connection's Pub/Sub pushes. Loaded only by the Google store client's builder; never logged or printed.
public struct GoogleCredentials: Sendable, Equatable {
    public let clientEmail: String?
    /// The service account's private key (PEM).
    public let privateKeyPEM: String?
    public let tokenURI: String?
    public let baseURL: String?
    /// What a push's OIDC token must say (`aud`, `email`) and where its signing keys are.
    public let pushAudience: String?
    public let pushServiceAccount: String?
    public let pushJWKSURL: String?
}

/// Reading a connection's credentials, apart from the connection itself so that only the code that builds a
/// store client ever holds them. Each read is of the connection's settings revision as the caller read it:
/// nil when the row changed since (or is gone, or is of the other store), so a client is never built from a
/// connection of one revision and credentials of another.
public enum StoreCredentials {
    public static func apple(of connection: StoreConnection) -> PostgresQuery<AppleCredentials?> {
        PostgresQuery("""
            SELECT api_key_id, api_issuer_id, api_private_key, api_base_url, trusted_roots_pem, sandbox_api_base_url
            FROM store_connections WHERE id = $1 AND store = 'apple' AND settings_revision = $2
            """, [connection.id, connection.settingsRevision]) { rows in
            try rows.first.map { row in
                AppleCredentials(keyID: try row.decodeOptional(0), issuerID: try row.decodeOptional(1),
                                 privateKeyPEM: try row.decodeOptional(2), baseURL: try row.decodeOptional(3),
                                 sandboxBaseURL: try row.decodeOptional(5), trustedRootsPEM: try row.decodeOptional(4))
            }
        }
    }

    public static func google(of connection: StoreConnection) -> PostgresQuery<GoogleCredentials?> {
        PostgresQuery("""
            SELECT api_client_email, api_private_key, api_token_uri, api_base_url, push_audience, push_service_account,
                   push_jwks_url
            FROM store_connections WHERE id = $1 AND store = 'google' AND settings_revision = $2
            """, [connection.id, connection.settingsRevision]) { rows in
            try rows.first.map { row in
                GoogleCredentials(clientEmail: try row.decodeOptional(0), privateKeyPEM: try row.decodeOptional(1),
                                  tokenURI: try row.decodeOptional(2), baseURL: try row.decodeOptional(3),
                                  pushAudience: try row.decodeOptional(4), pushServiceAccount: try row.decodeOptional(5),
                                  pushJWKSURL: try row.decodeOptional(6))
            }
        }
    }
}
