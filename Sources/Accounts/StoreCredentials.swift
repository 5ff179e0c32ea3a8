import Postgres

/// How StoreSync calls the App Store Server API for a connection and which roots its signed data must chain
/// to. Loaded only by the Apple store client's builder; never logged or printed.
public struct AppleCredentials: Sendable, Equatable {
    public let keyID: String?
    public let issuerID: String?
    /// The API private key (PEM).
    public let privateKeyPEM: String?
    public let baseURL: String?
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

/// A connection's credentials as of one `StoreConnection.settingsRevision`.
public struct Credentialed<Credentials: Sendable & Equatable>: Sendable, Equatable {
    public let revision: Int64
    public let credentials: Credentials
}

/// Reading a connection's credentials, apart from the connection itself so that only the code that builds a
/// store client ever holds them.
public enum StoreCredentials {
    /// The Apple credentials of connection `id`, or nil when it is gone or not an Apple connection.
    public static func apple(connectionID id: Int64) -> PostgresQuery<Credentialed<AppleCredentials>?> {
        PostgresQuery("""
            SELECT settings_revision, api_key_id, api_issuer_id, api_private_key, api_base_url, trusted_roots_pem
            FROM store_connections WHERE id = $1 AND store = 'apple'
            """, [id]) { rows in
            try rows.first.map { row in
                Credentialed(revision: try row.decode(0), credentials: AppleCredentials(
                    keyID: try row.decodeOptional(1), issuerID: try row.decodeOptional(2),
                    privateKeyPEM: try row.decodeOptional(3), baseURL: try row.decodeOptional(4),
                    trustedRootsPEM: try row.decodeOptional(5)))
            }
        }
    }

    /// The Google credentials of connection `id`, or nil when it is gone or not a Google connection.
    public static func google(connectionID id: Int64) -> PostgresQuery<Credentialed<GoogleCredentials>?> {
        PostgresQuery("""
            SELECT settings_revision, api_client_email, api_private_key, api_token_uri, api_base_url, push_audience,
                   push_service_account, push_jwks_url
            FROM store_connections WHERE id = $1 AND store = 'google'
            """, [id]) { rows in
            try rows.first.map { row in
                Credentialed(revision: try row.decode(0), credentials: GoogleCredentials(
                    clientEmail: try row.decodeOptional(1), privateKeyPEM: try row.decodeOptional(2),
                    tokenURI: try row.decodeOptional(3), baseURL: try row.decodeOptional(4),
                    pushAudience: try row.decodeOptional(5), pushServiceAccount: try row.decodeOptional(6),
                    pushJWKSURL: try row.decodeOptional(7)))
            }
        }
    }
}
